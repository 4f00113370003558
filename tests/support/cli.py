"""`engram` in this process, as a test drives it: `main(argv)` with pytest's captured output.

Output captured before the call is dropped, so what a call returns is that call's alone.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engram_mcp.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`engram *argv`: its exit code, stdout and stderr."""
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    """`engram *argv --json`: its exit code and the envelope it printed."""
    code, out, _ = run(capsys, *argv, "--json")
    envelope: dict[str, Any] = json.loads(out)
    return code, envelope
