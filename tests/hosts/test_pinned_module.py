"""Without an installed script, link pins this Python with `-P -m`: the host starts the server
in the clone's folder, and `python -m` alone imports a planted `engram_mcp/` from there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engram_mcp.hosts.link import launch


def test_the_module_pin_keeps_the_current_folder_off_the_import_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launch, "installed_script", lambda name: None)
    program, args = launch.pinned("engram-mcp")
    assert (program, args) == (sys.executable, ["-P", "-m", "engram_mcp"])
    assert launch.is_ours(program, args) and not launch.is_ours(program, ["-m", "engram_mcp"])
    planted = tmp_path / "clone" / "engram_mcp"
    planted.mkdir(parents=True)
    marker = tmp_path / "ran"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    (planted / "__main__.py").write_text("")
    subprocess.run([program, *args, "--version"], cwd=planted.parent, capture_output=True, timeout=60)
    assert not marker.exists()
    subprocess.run(
        [program, "-m", "engram_mcp", "--version"], cwd=planted.parent, capture_output=True, timeout=60
    )
    assert marker.exists()  # the attack is real: without -P the clone's package runs
