"""Issue 22, messages for people: the CLI speaks to the person at the terminal, never in the
words meant for the agent; a commit says what it saved and what it did not in plain words;
counts agree with their nouns; the top-level help lists the commands by group; a mistyped
command gets a suggestion; `engram import` says when its file does not exist.

Each test drives `engram` in-process through its entry point, on files in a tmp folder, so it
runs on the code before issue 22 too (ab538aa) and fails there by what it prints.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

AGENT_PHRASES = (
    "engram_commit",
    "engram_save",
    "approval_token",
    "the human",
    "engram_load",
    "engram_search",
)
"""Words for the agent: tool and argument names, and "the human" (the CLI speaks to them)."""

TOKEN = re.compile(r"(engram-[A-Za-z0-9_-]{20,})")

SESSION = """\
- We decided to keep invoice PDFs in S3 for seven years.
Remember that the zorblax quantifier is recalibrated every fortnight.
"""
ZORBLAX = "the-zorblax-quantifier-is-recalibrated-every-fortnight"


def _entry() -> Callable[[list[str]], int]:
    """`engram`'s main: engram_mcp.cli.main, or engram_mcp/cli.py where the command line was
    one module (ab538aa, where these tests are checked to fail by what they print)."""
    try:
        module = importlib.import_module("engram_mcp.cli.main")
    except ImportError:
        module = importlib.import_module("engram_mcp.cli")
    main: Callable[[list[str]], int] = module.main
    return main


def engram(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`engram *argv`: its exit code (argparse's SystemExit too), stdout and stderr."""
    capsys.readouterr()
    try:
        code = _entry()(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def here(tmp_path: Path, engram_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of fixtures/workspace (user scope from fixtures/home) as the current folder."""
    target = tmp_path / "project"
    shutil.copytree(FIXTURES / "workspace", target)
    shutil.copytree(FIXTURES / "home", engram_home, dirs_exist_ok=True)
    monkeypatch.chdir(target)
    yield target


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _stale_memory(workspace: Path, memory_id: str, title: str, ref: str) -> None:
    """A memory citing a file that is not in the working tree (so `engram stale` lists it)."""
    _write(
        workspace / ".engram" / "memory" / f"{memory_id}.md",
        f"---\nid: {memory_id}\ntype: fact\ntitle: {title}\nscope: project\nstatus: active\n"
        f"refs: [{ref}]\ncreated: 2026-01-05T10:00:00Z\nupdated: 2026-01-05T10:00:00Z\n---\n"
        f"{title}, see {ref}.\n",
    )


def _token(text: str) -> str:
    found = TOKEN.findall(text)
    assert found, text
    return str(found[0])


# --- the CLI never shows text meant for the agent ------------------------------------------------


def test_no_command_that_proposes_or_hints_speaks_to_the_agent(
    here: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: `engram import claude-md` printed "Show these candidates to the human. Call
    engram_commit with this approval_token…", `engram stale` "Fix the memory (engram_save with
    its id, new refs)". Every command that makes a proposal or names a next step says the CLI
    way (`engram commit TOKEN`, `engram edit ID`)."""
    claude_md = _write(tmp_path / "CLAUDE.md", "# Notes\n\n- Always run the zorblax linter before pushing.\n")
    session = _write(tmp_path / "session.txt", SESSION)
    empty = _write(tmp_path / "chat.txt", "hi\nok thanks\n")
    _stale_memory(here, "billing-entry-point", "Billing starts in api/billing_gone.py", "api/billing_gone.py")
    printed: dict[str, str] = {}

    def run(*argv: str) -> str:
        code, out, err = engram(capsys, *argv)
        printed[" ".join(argv)] = out + err
        return out + err

    imported = run("import", "claude-md", str(claude_md))
    proposed = run("save-session", "--text", str(session))
    token = _token(proposed)
    run("commit", token, "--approve", "9")
    run("commit", "engram-nonsense")
    run("commit", token)
    run("commit", token)  # used
    cancelled = _token(run("import", "claude-md", str(claude_md)))
    run("pending", "--cancel", cancelled)
    refused = run("commit", cancelled)
    run("save-session", "--text", str(empty))
    noted = run("note", "The flaky export test needs TZ=UTC to pass locally")
    note_id = re.search(r"Saved note (\S+) ", noted)
    assert note_id is not None, noted
    promoted = run("promote", note_id.group(1))
    stale = run("stale")
    for argv, text in printed.items():
        for phrase in AGENT_PHRASES:
            assert phrase not in text, f"`engram {argv}` says {phrase!r}:\n{text}"
    assert "billing-entry-point" in stale and "`engram edit ID`" in stale
    assert "ENGRAM_DECLINED" in refused and "`engram save-session`" in refused
    assert "`engram commit " in imported and "`engram commit " in promoted


def test_the_tools_keep_the_agents_words(here: Path) -> None:
    """The MCP tools name the tool calls: the preview ends with engram_commit and the
    approval_token; a commit the store changed under says to propose again with engram_save."""
    from tests.support.tools import call_tool

    uv = "Always use uv for Python environments, never bare pip install."
    saved = call_tool(here, "engram_save", {"candidates": [{"type": "rule", "title": "Use uv", "body": uv}]})
    assert "Call engram_commit with this approval_token" in saved.text
    assert saved.structured is not None
    data = saved.structured["data"]
    assert data["candidates"][0]["verdict"] == "UPDATE use-uv-for-python"
    target = here / ".engram" / "memory" / "use-uv-for-python.md"
    target.write_text(target.read_text("utf-8") + "\nPin uv itself in CI too.\n", encoding="utf-8")
    committed = call_tool(here, "engram_commit", {"approval_token": data["approval_token"], "approve": "all"})
    assert committed.text.startswith("Not saved: use-uv-for-python changed since the proposal")
    assert committed.text.endswith(
        "; propose it again (engram_save or engram_save_session) to show the human its new verdict."
    )


# --- verdict outcomes in plain words -------------------------------------------------------------


def test_a_saved_memory_and_a_duplicate_are_said_in_plain_words(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: `Written: 1; deferred: 0.` on every add; a duplicate read "deferred: was NOOP
    duplicate of X, now NOOP duplicate of X: already known: nothing to write"."""
    body = "Run the zorblax calibration before every release, never after it."
    code, out, err = engram(capsys, "add", "rule", "Calibrate the zorblax", body, "--yes")
    assert (code, err) == (0, "")
    assert out == "Saved 1 memory: calibrate-the-zorblax (.engram/memory/calibrate-the-zorblax.md).\n"
    code, out, err = engram(capsys, "add", "rule", "Calibrate the zorblax", body, "--yes")
    assert (code, err) == (0, "")
    assert out == "Not saved: already saved as calibrate-the-zorblax.\n"


def test_a_candidate_save_session_force_already_wrote_is_already_saved(
    here: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: a proposal whose candidates `ss -f` wrote meanwhile said "the store changed
    since the proposal; propose again", wrong advice since they are saved."""
    session = _write(
        tmp_path / "session.txt", "Remember that the zorblax quantifier is recalibrated every fortnight.\n"
    )
    token = _token(engram(capsys, "save-session", "--text", str(session))[1])
    code, out, _ = engram(capsys, "ss", "-f", "--text", str(session))
    assert code == 0 and f"{ZORBLAX} (.engram/memory/{ZORBLAX}.md)" in out
    code, out, err = engram(capsys, "commit", token)
    assert (code, err) == (0, "")
    assert out == f"Not saved: already saved as {ZORBLAX}.\n"


def test_a_candidate_whose_memory_changed_says_how_to_propose_it_afresh(
    here: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real conflict: the memory an UPDATE rewrites changed since the proposal. Not saved,
    naming the memory and the command to run again."""
    session = _write(
        tmp_path / "session.txt", "Always use uv for Python environments, never bare pip install.\n"
    )
    code, out, _ = engram(capsys, "save-session", "--text", str(session), "--json")
    data = orjson.loads(out)["data"]
    assert data["candidates"][0]["verdict"] == "UPDATE use-uv-for-python"
    target = here / ".engram" / "memory" / "use-uv-for-python.md"
    target.write_text(target.read_text("utf-8") + "\nPin uv itself in CI too.\n", encoding="utf-8")
    code, out, err = engram(capsys, "commit", data["approval_token"])
    assert (code, err) == (0, "")
    assert out.startswith("Not saved: use-uv-for-python changed since the proposal")
    assert out.endswith(
        "; run `engram save-session` (or the command that made it) again to propose it afresh.\n"
    )
    assert "deferred" not in out and "propose again" not in out


def test_the_commit_envelope_keeps_its_keys_and_names_the_memory_that_holds_a_duplicate(
    here: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--json` keeps `written` and `deferred` (n, pinned, now, reason); a candidate already
    saved names the memory that holds it (`saved_as`)."""
    session = _write(tmp_path / "session.txt", SESSION)
    token = _token(engram(capsys, "save-session", "--text", str(session))[1])
    engram(capsys, "ss", "-f", "--text", str(session))
    code, out, _ = engram(capsys, "commit", token, "--json")
    data: dict[str, Any] = orjson.loads(out)["data"]
    assert data["written"] == []
    assert [(d["n"], d["pinned"], d["saved_as"]) for d in data["deferred"]] == [
        (1, "ADD", "we-decided-to-keep-invoice-pdfs-in-s3-for-seven-years"),
        (2, "ADD", ZORBLAX),
    ]
    assert all({"now", "reason"} <= set(d) for d in data["deferred"])


# --- numbers agree with their nouns --------------------------------------------------------------


def test_counts_agree_with_their_nouns(
    here: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: "2 stale memory(ies)"; likewise "1 expired note(s)", "1 candidate(s)"."""
    _stale_memory(here, "billing-entry-point", "Billing starts in api/billing_gone.py", "api/billing_gone.py")
    assert engram(capsys, "stale")[1].startswith("1 stale memory, 0 to review:\n")
    _stale_memory(here, "tax-entry-point", "Tax starts in api/tax_gone.py", "api/tax_gone.py")
    assert engram(capsys, "stale")[1].startswith("2 stale memories, 0 to review:\n")
    assert engram(capsys, "stale", "--expired")[1].startswith("0 expired memories (kept on disk")
    assert engram(capsys, "gc")[1] == "Removed 1 expired note: stripe-api-upgrade-scratch\n"
    one = _write(
        tmp_path / "one.txt", "Remember that the zorblax quantifier is recalibrated every fortnight.\n"
    )
    assert (
        "Proposal: 1 candidate, 0 redactions. Nothing is saved yet."
        in engram(capsys, "save-session", "--text", str(one))[1]
    )
    two = engram(capsys, "save-session", "--text", str(_write(tmp_path / "two.txt", SESSION)))[1]
    assert "Proposal: 2 candidates, 0 redactions." in two
    for text in (engram(capsys, "stale")[1], two):
        assert "(s)" not in text and "(ies)" not in text


# --- the top-level help --------------------------------------------------------------------------

GROUPS = {
    "Start": ["init", "status", "doctor", "link", "unlink", "upgrade"],
    "Memory": ["add", "list", "show", "search", "route", "load", "index", "edit", "forget", "restore"],
    "Review": ["pending", "commit", "verify", "stale", "history", "ui"],
    "Session": ["save-session (ss)", "note", "promote", "gc", "import", "export"],
    "For hosts": ["hook"],
}


def _listed(help_text: str) -> dict[str, list[str]]:
    """The help's groups: each `Title:` heading with the commands indented under it."""
    groups: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in help_text.splitlines():
        if re.fullmatch(r"[A-Z][A-Za-z ]+:", line):
            current = groups.setdefault(line[:-1], [])
        elif current is not None and (found := re.match(r"  (\S+(?: \(\w+\))?)(?:  |$)", line)):
            current.append(found.group(1))
        elif not line.strip():
            current = None
    return groups


def test_the_top_level_help_lists_the_commands_by_group(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 22: `engram --help` was a flat list of 28 commands in no order. Now groups a
    person scans, in order, each command with its one-line help, and no flat list besides."""
    code, out, _ = engram(capsys, "--help")
    assert code == 0
    groups = _listed(out)
    assert {title: names for title, names in groups.items() if title != "options"} == GROUPS
    assert list(groups)[: len(GROUPS)] == list(GROUPS)
    assert re.search(r"^  commit +write the approved candidates of a proposal$", out, re.M)
    assert "{init," not in out and "positional arguments" not in out
    assert out.count("\n  status ") == 1  # listed once
    assert "`engram COMMAND --help`" in out


def test_engram_alone_prints_the_grouped_help(capsys: pytest.CaptureFixture[str]) -> None:
    """`engram` with no command: the same groups (on stderr, exit 2 as for any usage error)."""
    code, out, err = engram(capsys)
    assert (code, out) == (2, "")
    assert _listed(err).keys() >= GROUPS.keys()


def test_a_subcommands_help_is_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = engram(capsys, "list", "--help")
    assert code == 0 and out.startswith("usage: engram list ") and "Memory:" not in out


# --- did you mean --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["lsit"], "engram: unknown command 'lsit'. Did you mean 'list'?"),
        (["--json", "serach", "uv"], "engram: unknown command 'serach'. Did you mean 'search'?"),
        (["--workspace", ".", "comit", "x"], "engram: unknown command 'comit'. Did you mean 'commit'?"),
        (["frobnicate"], "engram: unknown command 'frobnicate'. `engram --help` lists the commands."),
    ],
)
def test_a_mistyped_command_gets_a_suggestion(
    here: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    """Issue 22: `engram lsit` got argparse's invalid choice and all 28 names."""
    assert engram(capsys, *argv) == (2, "", said + "\n")


# --- import says when its file does not exist ----------------------------------------------------


def test_import_of_a_file_that_does_not_exist_says_so(
    here: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: `import claude-md /nonexistent.md` answered "nothing to import from
    nonexistent.md", as if the file were there and empty."""
    missing = tmp_path / "nonexistent.md"
    code, out, err = engram(capsys, "import", "claude-md", str(missing))
    assert (code, out) == (1, "")
    assert err.startswith(f"ENGRAM_NOT_FOUND: {missing} does not exist; name the file:")
    assert "nothing to import" not in err


def test_import_of_a_folder_or_a_fifo_says_what_it_is(
    here: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    code, _, err = engram(capsys, "import", "agents-md", str(folder))
    assert code == 1 and err.startswith(f"ENGRAM_NOT_FOUND: {folder} is a folder, not a file;")
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.md"
        os.mkfifo(fifo)
        code, _, err = engram(capsys, "import", "claude-md", str(fifo))  # never opened: it would block
        assert code == 1 and err.startswith(f"ENGRAM_NOT_FOUND: {fifo} is not a regular file;")


def test_import_with_no_file_in_the_workspace_names_where_it_looked(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = engram(capsys, "import", "claude-md")
    assert code == 1
    assert err.startswith("ENGRAM_NOT_FOUND: no CLAUDE.md or .claude/CLAUDE.md in the workspace;")


def test_an_existing_file_with_nothing_to_import_is_told_apart(
    here: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that is there but holds no instruction: ENGRAM_VALIDATION, not not-found."""
    empty = _write(tmp_path / "CLAUDE.md", "# Title only\n")
    code, _, err = engram(capsys, "import", "claude-md", str(empty))
    assert code == 1 and err.startswith("ENGRAM_VALIDATION: nothing to import from CLAUDE.md: it holds no")
