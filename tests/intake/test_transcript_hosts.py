"""Acceptance (issue 19, Build 6): save-session mines only the human's own words, from the
sessions of the host the human means.

fixtures/sessions/ holds one session per host in its real format (Claude Code 2.1, Codex 0.171,
Gemini CLI 0.61, opencode 1.18.33), each with lines the model or the host wrote planted among
the human's: compact summaries, sub-agent prompts, tool results, command wrappers and output,
system reminders, interruption markers, AGENTS.md and environment injections, synthetic parts.
Every planted line carries `PLANTED_`; none may reach a candidate. Files go where each host
keeps them under a temporary HOME.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.intake.transcripts.bounded import Skips, jsonl
from engram_mcp.intake.transcripts.sessions import recent_sessions
from tests.support.cli import run, run_json
from tests.support.paths import FIXTURES
from tests.support.wire import WireSession

SESSIONS = FIXTURES / "sessions"
CLAUDE = "claude-5d1c7e20-8a3b-4f6e-9c21-7b0e4d2a1f93.jsonl"
CODEX = "rollout-2026-12-01T11-00-00-01a23400-0000-7000-8000-00000000c0de.jsonl"
CODEX_SUBAGENT = "rollout-2026-12-01T11-05-00-01a23400-0000-7000-8000-0000000005ab.jsonl"
GEMINI = "gemini-session-2026-12-01T12-00-8c41d2e7.jsonl"
GEMINI_SESSION_ID = "8c41d2e7-3f0a-4b59-a6e2-1d9c7b5f0e34"

CLAUDE_TITLES = {
    "We decided to keep invoices in the ledger service",
    "The staging database resets every night at 02:00 UTC",
    "Never deploy the billing service on a Friday afternoon",
}
CODEX_TITLES = {
    "We decided to publish the SDK from the release branch only",
    "Never run the release script without the VPN connected",
}
GEMINI_TITLES = {
    "We decided to cache the exchange rates for one hour",
    "Always read @docs/runbook.md before touching the payment cron",
    "The payment cron must never run twice in the same minute",
}
OPENCODE_TITLES = {
    "We decided to run the invoice export at 03:00 UTC every day",
    "Never retry a failed export without clearing the lock file",
}


@pytest.fixture
def ws(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The workspace as the current folder, with no host folder moved by the environment."""
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "XDG_DATA_HOME", "OPENCODE_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(workspace)
    return workspace.resolve()


def _text(name: str, ws: Path) -> str:
    path = str(ws)
    return (
        (SESSIONS / name)
        .read_text("utf-8")
        .replace("__WORKSPACE__", path)
        .replace("__PROJECT_HASH__", hashlib.sha256(path.encode()).hexdigest())
    )


def claude_dir(home: Path, ws: Path) -> Path:
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(ws))


def plant_claude(home: Path, ws: Path, mtime: float = 1_790_000_000) -> Path:
    folder = claude_dir(home, ws)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / CLAUDE.removeprefix("claude-")
    target.write_text(_text(CLAUDE, ws), "utf-8")
    (folder / "agent-7f00a1b2.jsonl").write_text(_text("claude-agent-7f00a1b2.jsonl", ws), "utf-8")
    os.utime(target, (mtime, mtime))
    return target


def plant_codex(home: Path, ws: Path, mtime: float = 1_790_000_000) -> Path:
    day = home / ".codex" / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True, exist_ok=True)
    for name in (CODEX, CODEX_SUBAGENT):
        (day / name).write_text(_text(name, ws), "utf-8")
        os.utime(day / name, (mtime, mtime))
    return day / CODEX


def plant_gemini(home: Path, ws: Path, *, logs: bool = False) -> Path:
    gemini = home / ".gemini"
    project = gemini / "tmp" / ws.name
    chats = project / "chats"
    (chats / GEMINI_SESSION_ID).mkdir(parents=True)
    (gemini / "projects.json").write_text(json.dumps({"projects": {str(ws): ws.name}}), "utf-8")
    (project / ".project_root").write_text(str(ws), "utf-8")
    session = chats / f"session-2026-12-01T12-00-{GEMINI_SESSION_ID[:8]}.jsonl"
    session.write_text(_text(GEMINI, ws), "utf-8")
    (chats / GEMINI_SESSION_ID / "sub-7a1e.jsonl").write_text(_text("gemini-subagent.jsonl", ws))
    other = chats / "session-2026-12-01T11-00-99999999.jsonl"
    other.write_text(_text("gemini-other-project.jsonl", ws), "utf-8")
    os.utime(other, (1_800_000_000, 1_800_000_000))  # newer, but another project's
    if logs:
        (project / "logs.json").write_text(_text("gemini-logs.json", ws), "utf-8")
    return session


def opencode_db(home: Path) -> Path:
    return home / ".local" / "share" / "opencode" / "opencode.db"


def plant_opencode(home: Path, ws: Path) -> Path:
    db = opencode_db(home)
    db.parent.mkdir(parents=True)
    rows: dict[str, list[dict[str, Any]]] = json.loads(_text("opencode-sessions.json", ws))
    with sqlite3.connect(db) as conn:
        conn.executescript((SESSIONS / "opencode-1.18.33-schema.sql").read_text("utf-8"))
        for table in ("project", "session", "message", "part"):
            for row in rows[table]:
                columns = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(row.values()))
    conn.close()
    return db


RECORDED = SESSIONS / "recorded"


def plant_recorded(home: Path, ws: Path, host: str) -> None:
    """Sessions the real CLIs wrote in `make hosts-e2e` (Claude Code 2.1.332 ran `/engram ss -f`),
    their workspace path and the hosts' own prompts left out."""
    key = re.sub(r"[^A-Za-z0-9]", "-", str(ws))

    def text(name: str) -> str:
        return _text(f"recorded/{name}", ws).replace("__WORKSPACE_KEY__", key)

    if host == "claude":
        claude_dir(home, ws).mkdir(parents=True)
        (claude_dir(home, ws) / "d03a4ab8-db5a-4677-9aa1-1417957f308c.jsonl").write_text(
            text("claude-2.1.332-engram-ss-f.jsonl")
        )
    elif host == "codex":
        name = "rollout-2026-12-01T19-20-32-01a2330d-3397-7c32-8a39-2f1c7ced10c3.jsonl"
        (home / ".codex" / "sessions" / "2026" / "12" / "01").mkdir(parents=True)
        (home / ".codex" / "sessions" / "2026" / "12" / "01" / name).write_text(text(name))
    elif host == "gemini":
        chats = home / ".gemini" / "tmp" / "workspace" / "chats"
        chats.mkdir(parents=True)
        (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": {str(ws): "workspace"}}))
        name = "gemini-0.61.0-session-2026-12-01T19-20-25f87dac.jsonl"
        (chats / name.removeprefix("gemini-0.61.0-")).write_text(text(name))
    else:
        db = opencode_db(home)
        db.parent.mkdir(parents=True)
        rows: dict[str, list[dict[str, Any]]] = json.loads(text("opencode-1.18.33-rows.json"))
        with sqlite3.connect(db) as conn:
            conn.executescript((SESSIONS / "opencode-1.18.33-schema.sql").read_text("utf-8"))
            for table in ("project", "session", "message", "part"):
                for row in rows[table]:
                    marks = ", ".join("?" for _ in row)
                    conn.execute(
                        f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", list(row.values())
                    )
        conn.close()


@pytest.mark.parametrize(
    ("host", "typed"),
    [
        ("claude", "Remember that we always run make lint before every commit in this repository."),
        ("codex", "Commit the pending engram proposal."),
        ("gemini", "Commit the pending engram proposal."),
        ("opencode", '"Commit the pending engram proposal."'),  # the e2e harness passes the quotes
    ],
)
def test_sessions_the_real_hosts_wrote_give_exactly_what_the_human_typed(
    ws: Path, private_home: Path, host: str, typed: str
) -> None:
    """The `/engram ss -f` expansion, its tool result, skill and environment context, server
    instructions and the model's turns of real sessions are all left out."""
    plant_recorded(private_home, ws, host)
    said = recent_sessions(ws, 1, host=host)
    assert said.texts == [typed] and len(said.sessions) == 1 and said.skipped_lines == 0


def _titles(envelope: dict[str, Any]) -> set[str]:
    return {row["title"] for row in envelope["data"]["candidates"]}


def _proposed(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[set[str], dict[str, Any]]:
    rc, envelope = run_json(capsys, "save-session", "--query-level", "5", *flags)
    assert rc == 0, envelope
    assert "PLANTED" not in json.dumps(envelope), "a line the human did not type was mined"
    return _titles(envelope), envelope


def test_claude_compact_summaries_sidechains_tool_results_and_command_output_are_not_mined(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the human's typed text: isCompactSummary, isSidechain, isMeta, tool_result items,
    <command-…>/<local-command-stdout>/<bash-…> lines, <system-reminder> blocks, interruption
    markers and non-human origins are the host's or the model's."""
    plant_claude(private_home, ws)
    titles, _ = _proposed(capsys)
    assert titles == CLAUDE_TITLES


def test_codex_injections_tool_output_and_subagent_rollouts_are_not_mined(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AGENTS.md and <user_instructions> injections, environment context, exec and tool output,
    shell-command and turn-aborted records, the compaction summary and a sub-agent's rollout."""
    plant_codex(private_home, ws)
    titles, envelope = _proposed(capsys)
    assert titles == CODEX_TITLES
    said = recent_sessions(ws, 5)
    assert said.sessions == [f"Codex ~/.codex/sessions/2026/12/01/{CODEX}"]


def test_gemini_cli_chat_file_gives_only_the_typed_prompts(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gemini CLI 0.61 JSONL: displayContent over the expanded @file content; function responses,
    shell results, <session_context>/<state_snapshot>/<hook_context>, slash commands, info lines,
    rewound messages, sub-agent chats and another project's file are left out."""
    plant_gemini(private_home, ws)
    titles, envelope = _proposed(capsys, "--host", "gemini")
    # the chat file cannot tell a custom command's expanded prompt from typed text
    assert titles - {"Always TEMPLATE_CUSTOM_COMMAND review the diff with care before you answer"} == (
        GEMINI_TITLES
    )


def test_gemini_cli_logs_json_is_what_the_human_typed(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """logs.json holds exactly what was typed at the prompt: it wins over the chat file."""
    plant_gemini(private_home, ws, logs=True)
    titles, _ = _proposed(capsys, "--host", "gemini")
    assert titles == GEMINI_TITLES


def test_opencode_database_gives_only_the_humans_parts(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """opencode 1.18.33's SQLite store: user text parts only; synthetic and ignored parts, tool
    output, the compaction summary, child (sub-agent) sessions and other folders are left out."""
    plant_opencode(private_home, ws)
    titles, envelope = _proposed(capsys, "--host", "opencode")
    assert titles == OPENCODE_TITLES
    said = recent_sessions(ws, 5, host="opencode")
    assert said.sessions == ["opencode ~/.local/share/opencode/opencode.db session ses_main0001"]


def test_host_gemini_never_reads_a_claude_or_codex_transcript(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`/engram ss -f` in Gemini runs `save-session --force --host gemini`: the newest Claude
    and Codex sessions of the same workspace are not its session."""
    plant_claude(private_home, ws, mtime=1_900_000_000)
    plant_codex(private_home, ws, mtime=1_900_000_000)
    memory = ws / ".engram" / "memory"
    before = {p.name for p in memory.iterdir()}
    rc, out, err = run(capsys, "save-session", "--force", "--host", "gemini")
    assert rc == 1
    assert {p.name for p in memory.iterdir()} == before, "nothing is written"
    assert "~/.gemini/" in err and "--text FILE" in err, err
    assert "ledger" not in out + err and "release" not in out + err
    plant_gemini(private_home, ws)
    rc, out, err = run(capsys, "save-session", "--force", "--host", "gemini")
    assert rc == 0, err
    written = "\n".join((memory / name).read_text() for name in {p.name for p in memory.iterdir()} - before)
    assert "exchange rates" in written and "payment cron" in written
    assert "ledger" not in written and "release" not in written and "PLANTED" not in written
    assert f"Gemini CLI ~/.gemini/tmp/{ws.name}/chats/session-" in out


def test_nothing_found_names_every_folder_engram_looked_in(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = re.sub(r"[^A-Za-z0-9]", "-", str(ws))
    rc, out, err = run(capsys, "save-session")
    assert rc == 1
    for folder in (
        f"~/.claude/projects/{key}/",
        "~/.codex/sessions/",
        "~/.gemini/",
        "~/.local/share/opencode/",
    ):
        assert folder in err, (folder, err)
    assert "--text FILE" in err and "engram_save_session" in err
    rc, out, err = run(capsys, "save-session", "--host", "opencode")
    assert rc == 1
    assert "~/.local/share/opencode/opencode.db" in err and "~/.claude" not in err, err


def test_a_session_started_in_a_subfolder_of_the_workspace_is_found_from_there(
    ws: Path, private_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hosts key sessions by the folder they started in; `/engram` runs engram from there."""
    plant_claude(private_home, ws / "src")
    monkeypatch.chdir(ws)
    assert recent_sessions(ws, 5, host="claude").sessions == []
    (ws / "src").mkdir(exist_ok=True)
    monkeypatch.chdir(ws / "src")
    said = recent_sessions(ws, 5, host="claude")
    assert len(said.sessions) == 1 and "We decided to keep invoices in the ledger service." in said.texts


def test_the_mcp_tool_reads_the_same_sessions_and_names_the_folders_on_a_miss(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with WireSession(ws) as wire:
        wire.initialize()
        result = wire.call("engram_save_session", {"query_level": 3})["result"]
        assert result["isError"] is True
        diagnostics = result["structuredContent"]["diagnostics"]
        assert [d["code"] for d in diagnostics] == ["ENGRAM_NOT_FOUND"]
        assert "~/.gemini/" in diagnostics[0]["message"] and "opencode.db" in diagnostics[0]["message"]
        plant_opencode(private_home, ws)
        plant_gemini(private_home, ws, logs=True)
        result = wire.call("engram_save_session", {"query_level": 3})["result"]
        assert not result.get("isError"), result
        candidates = result["structuredContent"]["data"]["candidates"]
        assert {c["title"] for c in candidates} == OPENCODE_TITLES | GEMINI_TITLES
        assert wire.close() == 0


def test_the_mcp_tool_with_a_host_reads_only_that_hosts_sessions(ws: Path, private_home: Path) -> None:
    """`/engram ss -f` in a host asks engram_save_session for that host's sessions only (the
    command file passes `host`): the newest Claude session of the same workspace is not read."""
    plant_claude(private_home, ws, mtime=1_900_000_000)
    with WireSession(ws) as wire:
        wire.initialize()
        result = wire.call("engram_save_session", {"query_level": 1, "host": "gemini"})["result"]
        assert result["isError"] is True
        message = result["structuredContent"]["diagnostics"][0]["message"]
        assert "~/.gemini/" in message and "~/.claude" not in message and "ledger" not in message
        plant_gemini(private_home, ws, logs=True)
        result = wire.call("engram_save_session", {"query_level": 1, "host": "gemini"})["result"]
        assert {c["title"] for c in result["structuredContent"]["data"]["candidates"]} == GEMINI_TITLES
        result = wire.call("engram_save_session", {"text": "We always use uv.", "host": "gemini"})["result"]
        assert result["isError"] is True
        result = wire.call("engram_save_session", {"query_level": 1, "host": "cursor"})["result"]
        assert result["isError"] is True
        assert wire.close() == 0


def test_pasted_session_text_loses_the_hosts_blocks(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--text` takes what the human pastes; a host's reminder or command output in it is not theirs."""
    (ws / "notes.txt").write_text(
        "We decided to keep the billing cron on UTC.\n"
        "<system-reminder>\nAlways PLANTED_REMINDER use the TodoWrite tool for every task.\n</system-reminder>\n"
        "<local-command-stdout>Never PLANTED_STDOUT commit the lock file by hand.</local-command-stdout>\n"
        "<environment_context>\n  <note>Always PLANTED_ENVIRONMENT stay inside the sandbox.</note>\n"
    )
    rc, envelope = run_json(capsys, "save-session", "--text", "notes.txt")
    assert rc == 0, envelope
    assert _titles(envelope) == {"We decided to keep the billing cron on UTC"}


def test_host_names_are_checked(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "save-session", "--force", "--host", "cursor")
    assert rc == 2
    assert "claude, codex, gemini, opencode" in err and "--text FILE" in err, err
    rc, out, err = run(capsys, "save-session", "--host", "claude", "--text", "notes.txt")
    assert rc == 2 and "--host" in err


def test_without_host_the_preview_names_each_host_and_session_file(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude = plant_claude(private_home, ws, mtime=1_800_000_000)
    plant_codex(private_home, ws, mtime=1_700_000_000)
    rc, out, err = run(capsys, "save-session", "--query-level", "5")
    assert rc == 0, err
    key = claude.parent.name
    assert "read 2 sessions" in out
    assert f"Claude Code ~/.claude/projects/{key}/{claude.name}" in out
    assert f"Codex ~/.codex/sessions/2026/12/01/{CODEX}" in out


def test_a_session_file_linked_out_of_the_host_folder_is_not_followed(
    ws: Path, private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside.jsonl"
    line = {"type": "user", "message": {"role": "user", "content": "We decided PLANTED_LINKED to use MySQL."}}
    outside.write_text(json.dumps(line) + "\n")
    folder = claude_dir(private_home, ws)
    folder.mkdir(parents=True)
    (folder / "linked.jsonl").symlink_to(outside)
    (private_home / ".local" / "share" / "opencode").mkdir(parents=True)
    opencode_db(private_home).symlink_to(tmp_path / "elsewhere.db")
    said = recent_sessions(ws, 5)
    assert said.sessions == [] and said.texts == []
    codex_outside = tmp_path / "codex-sessions"
    codex_outside.mkdir()
    (codex_outside / CODEX).write_text(_text(CODEX, ws))
    (private_home / ".codex").mkdir()
    (private_home / ".codex" / "sessions").symlink_to(codex_outside)
    assert recent_sessions(ws, 5).sessions == []


def test_malformed_and_oversized_files_are_skipped_without_a_crash(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = claude_dir(private_home, ws)
    folder.mkdir(parents=True)
    human = {"type": "user", "message": {"role": "user", "content": "Never push to main without a review."}}
    (folder / "bad.jsonl").write_bytes(
        b"\xff\xfe not json\n[1, 2]\n"
        + b"[" * 100_000
        + b"\n"
        + b'{"type": "user", "message": "x' * 5
        + b"a" * (5 << 20)
        + b"\n"
        + json.dumps({"type": "user", "message": {"content": {"text": 3}}}).encode()
        + b"\n"
        + json.dumps(human).encode()
        + b"\n"
    )
    day = private_home / ".codex" / "sessions" / "2026" / "12" / "02"
    day.mkdir(parents=True)
    meta = json.loads(_text(CODEX, ws).splitlines()[0])
    said = {"type": "response_item", "payload": {"type": "message", "role": "user", "content": "x"}}
    planted = {
        "type": "event_msg",
        "payload": {
            "type": "user_message",
            "message": "We decided PLANTED_LATE_META to use MySQL for every service.",
        },
    }
    # whose session a rollout is, its first record says: a session_meta further down is not it
    (day / "rollout-2026-12-02T00-00-00-late.jsonl").write_text(
        "\n".join(json.dumps(r) for r in ({"type": "turn_context"}, said, meta, planted)) + "\n"
    )
    gemini = private_home / ".gemini"
    (gemini / "tmp").mkdir(parents=True)
    (gemini / "projects.json").write_text(json.dumps({"projects": {str(ws): "../../../../etc"}}))
    opencode_db(private_home).parent.mkdir(parents=True)
    opencode_db(private_home).write_bytes(b"SQLite format 3\x00" + b"\x00garbage" * 500)
    rc, out, err = run(capsys, "save-session", "--query-level", "5")
    assert rc == 0, err
    assert "Never push to main without a review" in out
    assert "PLANTED" not in out
    assert re.search(r"skipped [1-9]\d* unreadable", out), out


def test_a_session_over_the_read_bound_keeps_its_header_and_its_newest_lines(tmp_path: Path) -> None:
    """The part of a long session the human means is its end; Codex's header is its first line."""
    path = tmp_path / "long.jsonl"
    lines = [{"n": n, "pad": "x" * 90} for n in range(2000)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    skips = Skips()
    read = [item["n"] for item in jsonl(path, skips, limit=20_000)]
    assert read[0] == 0 and read[-1] == 1999
    assert 150 < len(read) < 250 and read[1:] == list(range(read[1], 2000))
    assert skips.lines == 1, "the part left unread is said"


def test_a_fifo_named_like_a_session_does_not_hang_the_read(ws: Path, private_home: Path) -> None:
    folder = claude_dir(private_home, ws)
    folder.mkdir(parents=True)
    fifo = folder / "stuck.jsonl"
    os.mkfifo(fifo)
    done: list[Any] = []
    reader = threading.Thread(target=lambda: done.append(recent_sessions(ws, 5)), daemon=True)
    reader.start()
    reader.join(10)
    hung = reader.is_alive()
    if hung:  # let the blocked open return, so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert not hung, "reading the sessions waited on a FIFO"
    assert done[0].sessions == []
