"""Acceptance: `engram save-session --query-level N` mines the human's lines from real-format
Claude Code and Codex session files of this workspace (SPEC §7), CLI and MCP tool alike."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.support.cli import run, run_json
from tests.support.paths import FIXTURES
from tests.support.wire import WireSession

TRANSCRIPTS = FIXTURES / "transcripts-hosts"
CLAUDE_SESSION = "claude-session-7f3c2a10-5b1e-4c8e-9a61-2f0d3e4b5c6d.jsonl"
CODEX_ROLLOUT = "rollout-2026-11-29T10-00-00-019a7e21-3c4d-7e8f-9a0b-1c2d3e4f5a6b.jsonl"
OTHER_ROLLOUT = "rollout-2026-11-28T08-00-00-019a7e21-0000-7000-8000-000000000000.jsonl"

# The human's decision / rule / remember lines from both hosts, de-duplicated (the sandbox
# gateway line is said in both, and Codex logs it twice). Nothing from assistant text, tool
# output, reasoning, isMeta lines, <command-…>/<environment_context> blocks, questions, or the
# session of another project.
EXPECTED = {
    ("decision", "We decided to generate credit notes through the same ledger service as invoices"),
    ("rule", "Always run the ledger reconciliation job before closing a billing month"),
    ("fact", "The sandbox payment gateway rejects amounts above 10000 EUR"),
    ("rule", "Never squash migration files after they are merged to main"),
    ("decision", "Going forward we tag every release with the date, like v2026.11.29"),
    ("gotcha", "The VAT export breaks when a customer has no country code"),
}
NEVER = (
    "small commits",
    "skip the linter",
    "request handler",
    "legacy invoice table",
    "double-check",
    "push on red",
    "generated files",
    "vendor the SDK",
    "gateway limits",
    "Fridays",
    "sandbox</note",
    "leave the sandbox",
    "DO NOT respond",
    "Mondays",
    "Thanks",
)


@pytest.fixture
def sessions(workspace: Path, private_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture transcripts where Claude Code and Codex keep them for this workspace."""
    monkeypatch.delenv("CODEX_HOME", raising=False)
    real = workspace.resolve()
    claude = private_home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(real))
    claude.mkdir(parents=True)
    shutil.copyfile(TRANSCRIPTS / CLAUDE_SESSION, claude / CLAUDE_SESSION)
    day = private_home / ".codex" / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True)
    text = (TRANSCRIPTS / CODEX_ROLLOUT).read_text().replace("__WORKSPACE__", str(real))
    (day / CODEX_ROLLOUT).write_text(text)
    other = private_home / ".codex" / "sessions" / "2026" / "11" / "28"
    other.mkdir(parents=True)
    shutil.copyfile(TRANSCRIPTS / OTHER_ROLLOUT, other / OTHER_ROLLOUT)
    os.utime(other / OTHER_ROLLOUT, (1_700_000_000, 1_700_000_000))
    monkeypatch.chdir(workspace)
    return workspace


def _proposed(rows: list[dict]) -> set[tuple[str, str]]:
    return {(row["type"], row["title"]) for row in rows}


def test_query_level_previews_the_humans_knowledge_lines_from_both_hosts(
    sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(p.name for p in (sessions / ".engram" / "memory").iterdir())
    rc, out, err = run(capsys, "save-session", "--query-level", "5")
    assert rc == 0, err
    assert "read 2 sessions" in out
    assert re.search(r"skipped 2 unreadable line", out), out
    for _, title in EXPECTED:
        assert title in out
    for phrase in NEVER:
        assert phrase not in out, phrase
    rc, envelope = run_json(capsys, "save-session", "--query-level", "5")
    assert rc == 0
    rows = envelope["data"]["candidates"]
    assert _proposed(rows) == EXPECTED
    assert len(rows) == len(EXPECTED)
    assert envelope["data"]["approval_token"]
    assert sorted(p.name for p in (sessions / ".engram" / "memory").iterdir()) == before, (
        "a preview writes nothing"
    )


def test_query_level_reads_only_the_last_n_sessions(
    sessions: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude = next((private_home / ".claude" / "projects").iterdir()) / CLAUDE_SESSION
    os.utime(claude, (1_800_000_000, 1_800_000_000))  # the newest session
    codex = next((private_home / ".codex" / "sessions").rglob(CODEX_ROLLOUT))
    os.utime(codex, (1_750_000_000, 1_750_000_000))
    rc, envelope = run_json(capsys, "save-session", "--query-level", "1")
    assert rc == 0
    titles = {title for _, title in _proposed(envelope["data"]["candidates"])}
    assert titles == {
        "We decided to generate credit notes through the same ledger service as invoices",
        "Always run the ledger reconciliation job before closing a billing month",
        "The sandbox payment gateway rejects amounts above 10000 EUR",
        "Never squash migration files after they are merged to main",
    }


def test_force_writes_the_adds(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, envelope = run_json(capsys, "save-session", "--query-level", "5")
    assert rc == 0
    adds = [row["id"] for row in envelope["data"]["candidates"] if row["verdict"].startswith("ADD")]
    assert adds, "the mined lines are new knowledge for this workspace"
    memory = sessions / ".engram" / "memory"
    before = {p.name for p in memory.iterdir()}
    rc, out, err = run(capsys, "save-session", "--query-level", "5", "--force")
    assert rc == 0, err
    created = {p.name for p in memory.iterdir()} - before
    assert created == {f"{ident}.md" for ident in adds}
    texts = "\n".join((memory / name).read_text() for name in created)
    assert "The VAT export breaks when a customer has no country code" in texts
    assert "skip the linter" not in texts


def test_the_mcp_tool_proposes_the_same_candidates(
    sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, envelope = run_json(capsys, "save-session", "--query-level", "5")
    assert rc == 0
    cli = _proposed(envelope["data"]["candidates"])
    with WireSession(sessions) as wire:
        wire.initialize()
        reply = wire.call("engram_save_session", {"query_level": 5})
        result = reply["result"]
        assert not result.get("isError"), result
        assert _proposed(result["structuredContent"]["data"]["candidates"]) == cli == EXPECTED
        reply = wire.call(
            "engram_save_session", {"query_level": 5, "text": "We decided to use tabs everywhere."}
        )
        result = reply["result"]
        assert result["isError"] is True
        codes = [d["code"] for d in result["structuredContent"]["diagnostics"]]
        assert codes == ["ENGRAM_VALIDATION"]
        assert wire.close() == 0


def test_cli_refuses_text_and_query_level_together(
    sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (sessions / "notes.txt").write_text("We decided to use tabs everywhere.\n")
    rc, out, err = run(capsys, "save-session", "--query-level", "5", "--text", "notes.txt")
    assert rc == 2 and "not both" in err
