"""The README names the profile file per shell (issue 22): Codex runs commands in a login
shell, which never reads ~/.bashrc, so a PATH line put only there leaves `engram` unfound.
The file and line the README gives for bash make a login shell find `engram-mcp`."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
VENV_BIN = ".local/share/engram-venv/bin"


def _row(shell: str) -> list[str]:
    """The backticked cells of the README's profile table row for `shell`."""
    for line in README.read_text("utf-8").splitlines():
        if line.startswith(f"| {shell} "):
            return re.findall(r"`([^`]+)`", line)
    raise AssertionError(f"README has no profile row for {shell}")


def _login_shell_finds(home: Path) -> bool:
    done = subprocess.run(
        ["env", "-i", f"HOME={home}", "bash", "-l", "-c", "command -v engram-mcp"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.returncode == 0 and done.stdout.strip().endswith("engram-mcp")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    home = tmp_path / "user"
    script = home / VENV_BIN / "engram-mcp"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n", "utf-8")
    script.chmod(0o755)
    return home


def test_the_readme_names_a_login_profile_for_each_shell() -> None:
    assert _row("bash")[0] == "~/.profile"
    assert _row("zsh")[0] == "~/.zprofile"
    assert "fish_add_path" in " ".join(_row("fish"))


def test_the_readme_bash_line_in_its_file_reaches_a_login_shell(home: Path) -> None:
    cells = _row("bash")
    file, line = cells[0], cells[-1]
    (home / file.removeprefix("~/")).write_text(line + "\n", "utf-8")
    assert _login_shell_finds(home)


def test_a_line_only_in_bashrc_does_not_reach_a_login_shell(home: Path) -> None:
    """Why the README names the file: what Codex's login shell sees with ~/.bashrc alone."""
    (home / ".bashrc").write_text(f'export PATH="$HOME/{VENV_BIN}:$PATH"\n', "utf-8")
    assert not _login_shell_finds(home)
