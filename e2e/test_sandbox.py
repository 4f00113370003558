"""The sandbox links as a user whose PATH holds this checkout's engram (issue 22): a workspace
link writes the bare `engram-mcp`, which the recording relay first on the host's PATH stands in
for. Runs real `engram` processes, without any host: `.venv/bin/python -m pytest e2e/test_sandbox.py`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from e2e.sandbox import BIN, Sandbox


def test_the_sandbox_links_with_the_bare_names(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    assert box.env["PATH"].split(os.pathsep)[0] == str(BIN)
    done = box.engram("link", "claude")
    assert done.returncode == 0, done.stderr
    entry = json.loads((box.workspace / ".mcp.json").read_text("utf-8"))["mcpServers"]["engram"]
    assert entry["command"] == "engram-mcp"
    hook = json.loads((box.workspace / ".claude" / "settings.json").read_text("utf-8"))
    assert hook["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "engram hook session-start"
