"""Issue 23, Build 7: the web stack stays off every start-up path but `engram ui`'s own:
`engram-mcp` imports none of it, and neither does any other `engram` command."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.paths import REPO

WEB_STACK = ("werkzeug", "jinja2", "markupsafe", "nh3", "markdown_it", "engram_mcp.ui")


def _loaded_after(code: str, cwd: Path) -> list[str]:
    """The web stack's modules loaded after running `code` in a fresh interpreter."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {WEB_STACK!r} or m.startswith("engram_mcp.ui"))))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_the_mcp_server_imports_no_web_stack(tmp_path: Path) -> None:
    """Issue 23: `engram-mcp` imports none of it (its module, and building its server)."""
    assert _loaded_after("import engram_mcp.mcp.server, engram_mcp.mcp.app", REPO) == []


def test_other_engram_commands_import_no_web_stack(tmp_path: Path) -> None:
    """engram's own rule: the CLI's start-up (its parser and a command) loads no web module."""
    code = f"""
        import contextlib, io, os
        os.chdir({str(tmp_path)!r})
        from engram_mcp.cli.main import main
        from engram_mcp.cli import commands
        commands.build_parser()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["status"])
            main(["list"])
        """
    assert _loaded_after(code, REPO) == []


def test_the_probe_sees_the_web_stack_when_it_is_loaded() -> None:
    """The check itself: importing the page's application is seen."""
    loaded = _loaded_after("import engram_mcp.ui.serve, engram_mcp.ui.render", REPO)
    assert {"werkzeug", "jinja2", "nh3", "markdown_it", "engram_mcp.ui.serve"} <= set(loaded)
