"""The CLI speaks to people, and writes only where a project is (issue 12, SPEC §2, §7):
flags named in messages, global flags anywhere, quiet exits, verify on stdout with ids, one
meaning of `ok`, no silent workspaces, discovery that stops at the git root; and the tools'
liberal `approve` and load's memory text."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram_mcp.cli.main import main
from engram_mcp.mcp.tools.write_tools import COMMIT_INPUT
from protocol.validation import compile_validator
from store.files.workspace import find_workspace
from store.store import Store
from tests.support.cli import run_json
from tests.support.paths import ENGRAM, ENGRAM_MCP
from tests.support.tools import call_tool
from tests.support.wire import default_sigint

LINE = "Remember that the zorblax quantifier is recalibrated every fortnight."


# --- human wording ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "flag", "tool_word"),
    [
        (["search", "uv", "--type", "bug"], "--type", "types[0]"),
        (["load", "--budget", "5"], "--budget", "budget_tokens"),
        (["search", "uv", "--limit", "0"], "--limit", "argument 'limit'"),
    ],
)
def test_usage_errors_name_flags_not_tool_arguments(
    ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str], flag: str, tool_word: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert flag in err and tool_word not in err


def test_a_bad_id_says_what_an_id_looks_like(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load", "--id", "Nope!"]) == 2
    err = capsys.readouterr().err
    assert "--id 'Nope!' is not a memory id: ids are 1-64 characters of a-z, 0-9 and '-'" in err
    assert "Load exactly this memory" not in err


def test_cli_output_names_commands_not_tools(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """save-session's preview, load's cards, an empty search, a bad --approve: CLI words only."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(LINE + "\n"))
    assert main(["save-session", "--text", "-"]) == 0
    preview = capsys.readouterr().out
    token = preview.split("approval token: ", 1)[1].split()[0]
    assert f"engram commit {token} --approve 1,3" in preview
    assert main(["load", "fix the crash in the invoice export", "--budget", "300"]) == 0
    loaded = capsys.readouterr().out
    assert "engram load --id ID" in loaded
    assert main(["search", "qwxyzzy"]) == 0
    searched = capsys.readouterr().out
    assert main(["commit", token, "--approve", "9"]) == 1
    refused = capsys.readouterr().err
    assert "--approve names 9" in refused
    for text in (preview, loaded, searched, refused):
        assert "engram_" not in text and "approval_token" not in text


def test_global_flags_work_in_any_position(
    workspace: Path,
    empty_workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(empty_workspace)
    for argv in (
        ["--json", "--workspace", str(workspace), "status"],
        ["status", "--workspace", str(workspace), "--json"],
        ["--workspace", str(workspace), "status", "--json"],
        ["--json", "status", "--workspace", str(workspace)],
    ):
        assert main(argv) == 0, argv
        envelope = json.loads(capsys.readouterr().out)
        assert envelope["data"]["counts"]["project"] == 40, argv


def test_ss_is_save_session_and_f_is_force(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(LINE + "\n"))
    assert main(["ss", "--text", "-", "-f"]) == 0
    assert (
        "Saved 1 memory: the-zorblax-quantifier-is-recalibrated-every-fortnight (" in capsys.readouterr().out
    )
    assert (ws / ".engram" / "memory" / "the-zorblax-quantifier-is-recalibrated-every-fortnight.md").exists()


# --- verify and the meaning of ok --------------------------------------------------------------


def test_verify_prints_its_report_on_stdout_with_the_ids(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify"]) == 1
    captured = capsys.readouterr()
    assert "Not yet recorded by engram (added by hand): " in captured.out
    assert "use-uv-for-python" in captured.out
    assert "added by hand: 4" not in captured.out and captured.err.count("Traceback") == 0


def test_verify_accept_lists_what_it_recorded(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--accept"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Recorded as reviewed: added: ") and "use-uv-for-python" in out
    with (ws / ".engram" / "memory" / "cut-a-release.md").open("ab") as handle:
        handle.write(b"Hand edit.\n")
    code, envelope = run_json(capsys, "verify", "--accept")
    assert code == 0
    assert envelope["data"]["accepted"] == {
        "mismatched": ["cut-a-release"],
        "unindexed": [],
        "missing": [],
        "agent_shell": [],
    }
    assert main(["verify", "--accept"]) == 0
    assert "nothing had changed" in capsys.readouterr().out


def test_cli_and_tool_share_one_meaning_of_ok(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ok: the command ran; data.ok is verify's verdict, the same in the CLI and the tool."""
    code, envelope = run_json(capsys, "verify")
    tool = call_tool(ws, "engram_verify", {})
    assert tool.structured is not None
    assert code == 1
    assert envelope["ok"] is tool.structured["ok"] is True
    assert envelope["data"]["ok"] is tool.structured["data"]["ok"] is False


# --- quiet exits ------------------------------------------------------------------------------


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_exits_0_quietly(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    errors = io.StringIO()
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    monkeypatch.setattr(sys, "stderr", errors)
    assert main(["load", "--full"]) == 0
    assert errors.getvalue() == ""


def test_a_closed_pipe_in_a_real_shell_pipeline_is_quiet(workspace: Path) -> None:
    done = subprocess.run(
        f"'{ENGRAM}' load --full | head -1",
        shell=True,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert done.stdout.startswith("engram: ")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def _wait_reading_stdin(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Wait until the process blocks reading its stdin pipe (its signal handling is in place by
    then): the kernel says so in /proc/<pid>/wchan. A bounded poll, never a fixed sleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if "pipe_read" in Path(f"/proc/{proc.pid}/wchan").read_text():
                return
        except OSError:
            pass
        time.sleep(0.02)
    raise AssertionError(f"{proc.args} did not start reading stdin within {timeout} s")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("program", ["engram", "engram-mcp"])
def test_signals_exit_quietly(workspace: Path, program: str, sig: signal.Signals, code: int) -> None:
    argv = [ENGRAM, "save-session", "--text", "-"] if program == "engram" else [ENGRAM_MCP]
    proc = subprocess.Popen(
        argv,
        cwd=workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_sigint,  # Ctrl-C as a terminal delivers it, even when the run is in the background
    )
    try:
        _wait_reading_stdin(proc)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert b"Traceback" not in err
    assert out == b""  # engram-mcp's stdout stays pure JSON-RPC: nothing at all here


# --- no silent workspaces ---------------------------------------------------------------------


def test_a_write_in_a_plain_folder_is_refused_naming_init(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(empty_workspace)
    assert main(["note", "Backfill reached batch 15 of 40"]) == 1
    err = capsys.readouterr().err
    assert "ENGRAM_NO_WORKSPACE" in err and "engram init" in err
    monkeypatch.setattr(sys, "stdin", io.StringIO(LINE + "\n"))
    assert main(["save-session", "--text", "-", "--force"]) == 1
    assert "ENGRAM_NO_WORKSPACE" in capsys.readouterr().err
    assert main(["add", "fact", "A fact", "Its body.", "--yes"]) == 1
    assert "ENGRAM_NO_WORKSPACE" in capsys.readouterr().err
    assert list(empty_workspace.iterdir()) == []
    assert main(["init"]) == 0  # the fix works
    assert main(["note", "Backfill reached batch 15 of 40"]) == 0


def test_a_missing_workspace_folder_is_an_error_and_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no" / "such"
    assert main(["--workspace", str(missing), "note", "A note about nothing much"]) == 1
    assert "--workspace" in capsys.readouterr().err
    assert main(["--workspace", str(missing), "status"]) == 1
    capsys.readouterr()
    assert not (tmp_path / "no").exists()


def test_engram_mcp_refuses_a_missing_workspace_folder(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    done = subprocess.run(
        [ENGRAM_MCP, "--workspace", str(missing)], input=b"", capture_output=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 1
    assert b"ENGRAM_NO_WORKSPACE" in done.stderr and b"--workspace" in done.stderr
    assert done.stdout == b""
    assert not (tmp_path / "no").exists()


def test_the_mcp_write_tools_refuse_a_plain_folder(empty_workspace: Path) -> None:
    candidate = {"type": "fact", "title": "A fact", "body": "Its body."}
    for name, arguments in (
        ("engram_save", {"candidates": [candidate]}),
        ("engram_note", {"text": "A working note"}),
        ("engram_commit", {"approval_token": "engram-00000000-x", "approve": "all"}),
        ("engram_save_session", {"text": LINE}),
    ):
        result = call_tool(empty_workspace, name, arguments)
        assert result.is_error and result.structured is not None, name
        assert result.structured["diagnostics"][0]["code"] == "ENGRAM_NO_WORKSPACE", name
    assert list(empty_workspace.iterdir()) == []


def test_the_first_write_in_a_git_root_creates_dot_engram(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    monkeypatch.chdir(repo / "src")
    assert main(["add", "fact", "A fact", "Its body.", "--yes"]) == 0
    assert (repo / ".engram" / "memory" / "a-fact.md").exists()


def test_a_nested_repository_never_borrows_its_parents_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An .engram/ above the git root belongs to another project (issue 12)."""
    parent = tmp_path / "mono"
    (parent / ".engram" / "memory").mkdir(parents=True)
    nested = parent / "vendor" / "lib"
    (nested / ".git").mkdir(parents=True)
    (nested / "src").mkdir()
    assert find_workspace(nested / "src", env={}) == nested.resolve()
    monkeypatch.chdir(nested / "src")
    assert main(["init"]) == 0
    assert (nested / ".engram" / "memory").is_dir()
    assert main(["add", "fact", "A nested fact", "Its body.", "--yes"]) == 0
    assert (nested / ".engram" / "memory" / "a-nested-fact.md").exists()
    assert list((parent / ".engram" / "memory").iterdir()) == []
    # inside the repository, the nearest .engram/ at or below its root still wins
    (nested / "src" / ".engram").mkdir()
    assert find_workspace(nested / "src", env={}) == (nested / "src").resolve()


def test_reads_of_an_empty_store_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "repo" / ".engram").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    code, envelope = run_json(capsys, "search", "anything")
    assert code == 0
    assert "ENGRAM_EMPTY" in [d["code"] for d in envelope["diagnostics"]]


# --- liberal where agents are loose -------------------------------------------------------------


@pytest.mark.parametrize("approve", ["all", "1", "1,2", " 1 , 2 ", [1, 2]])
def test_engram_commit_schema_accepts_every_form(approve: object) -> None:
    assert compile_validator(COMMIT_INPUT)({"approval_token": "engram-x", "approve": approve}) == []


def test_engram_commit_schema_error_shows_the_expected_form() -> None:
    problems = compile_validator(COMMIT_INPUT)({"approval_token": "engram-x", "approve": "first"})
    assert any('"1,3"' in p and "[1, 3]" in p for p in problems), problems


def test_engram_commit_takes_a_string_of_numbers(ws: Path) -> None:
    candidates = [
        {"type": "fact", "title": "Wobbegong cache warms slowly", "body": "It takes forty minutes."},
        {"type": "fact", "title": "Zorblax job runs at noon", "body": "Every weekday at noon UTC."},
    ]
    proposal = call_tool(ws, "engram_save", {"candidates": candidates})
    assert proposal.structured is not None
    token = proposal.structured["data"]["approval_token"]
    done = call_tool(ws, "engram_commit", {"approval_token": token, "approve": "2"})
    assert not done.is_error, done
    assert done.structured is not None
    assert [w["id"] for w in done.structured["data"]["written"]] == ["zorblax-job-runs-at-noon"]


def test_load_structured_content_carries_the_memories(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """engram_load and `engram load --json`: id, type, title, tier, tokens; body for the body tier."""
    code, envelope = run_json(capsys, "load", "fix the crash in the invoice export", "--budget", "1000")
    assert code == 0
    data = envelope["data"]
    rows = data["memories"]
    assert [r["id"] for r in rows] == [k for k in data["selected_keys"] if k not in data["omitted_ids"]]
    by_tier = {tier: [r["id"] for r in rows if r["tier"] == tier] for tier in ("body", "card")}
    assert by_tier == {"body": data["body_keys"], "card": data["card_ids"]}
    assert data["omitted_ids"], "the budget of 1000 sheds some: the omitted are named, without rows"
    for row in rows:
        assert ("body" in row) is (row["tier"] == "body")
    first = rows[0]
    assert first["body"] and first["body"] in Store(ws).get(first["id"]).body
    tool = call_tool(ws, "engram_load", {"id": "use-uv-for-python"})
    assert tool.structured is not None
    [row] = tool.structured["data"]["memories"]
    assert row["tier"] == "body" and "uv" in row["body"] and row["type"] == "rule"
