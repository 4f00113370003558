"""Regressions found by reviewing the write path and host linking."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli.main import main
from protocol.eras import META_CAPABILITIES
from tests.support.store_helpers import hold_elsewhere, let_go
from tests.support.wire import WireSession

ELICIT = {META_CAPABILITIES: {"elicitation": {}}}
CANDIDATE = {
    "type": "fact",
    "title": "Quokka ledger reconciles nightly",
    "body": "The quokka ledger job runs at 03:00.",
    "id": "quokka-ledger",
}


def _save(ws: WireSession, **extra: Any) -> dict[str, Any]:
    reply = ws.modern(
        "tools/call", {"name": "engram_save", "arguments": {"candidates": [CANDIDATE]}, **extra}, **ELICIT
    )
    result: dict[str, Any] = reply["result"]
    return result


def test_a_modern_retry_whose_preview_changed_is_asked_again(workspace: Path) -> None:
    """The human approved `ADD quokka-ledger`; a file of that id appearing before the retry
    must not turn the approval into an UPDATE of it: the retry asks again, nothing written."""
    target = workspace / ".engram" / "memory" / "quokka-ledger.md"
    with WireSession(workspace) as ws:
        asked = _save(ws)
        (key,) = asked["inputRequests"]
        target.write_text(
            "---\nid: quokka-ledger\ntype: fact\ntitle: Hand written\n---\nWritten by a human meanwhile.\n"
        )
        answer = {key: {"action": "accept", "content": {"candidate_1": True, "scope": "all"}}}
        retry = _save(ws, inputResponses=answer, requestState=asked["requestState"])
    assert retry["resultType"] == "input_required"
    assert list(retry["inputRequests"]) != [key]
    assert "Written by a human meanwhile." in target.read_text()


def test_unlink_keeps_a_container_the_user_already_had(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """VS Code's default `{"servers": {}, "inputs": []}` comes back byte for byte."""
    monkeypatch.chdir(workspace)
    original = '{\n  "servers": {},\n  "inputs": []\n}\n'
    config = workspace / ".vscode" / "mcp.json"
    config.parent.mkdir()
    config.write_text(original)
    assert main(["link", "vscode"]) == 0
    assert main(["unlink", "vscode"]) == 0
    assert config.read_text() == original
    capsys.readouterr()


def test_link_on_a_container_that_is_not_an_object_names_the_line(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spec-mandated: an unusable file is left untouched with an error naming it; no traceback."""
    monkeypatch.chdir(workspace)
    config = workspace / ".mcp.json"
    config.write_text('{"mcpServers": []}\n')
    assert main(["link", "claude", "--no-hook"]) == 1
    err = capsys.readouterr().err
    assert ".mcp.json" in err and "line 1" in err and "Traceback" not in err
    assert config.read_text() == '{"mcpServers": []}\n'


def test_verify_accept_reports_busy_instead_of_recording_nothing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spec-mandated: a lock not obtained in time is ENGRAM_BUSY, never a silent no-op."""
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("ENGRAM_LOCK_TIMEOUT", "0.5")  # the real 5 s wait is the same code path
    main(["status"])  # creates .engram/engram.lock's folder contents
    capsys.readouterr()
    holder = hold_elsewhere(workspace / ".engram" / "engram.lock")
    try:
        started = time.monotonic()
        assert main(["verify", "--accept"]) == 1
        assert "ENGRAM_BUSY" in capsys.readouterr().err
        assert time.monotonic() - started < 3
        assert holder.poll() is None, "the holder let go before verify gave up"
    finally:
        let_go(holder)
