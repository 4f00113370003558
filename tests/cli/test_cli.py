"""The `engram` command line (SPEC §7): in-process via main(argv), plus one real console-script run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engram_mcp import __version__
from engram_mcp.cli.main import main
from tests.support.cli import run_json
from tests.support.paths import ENGRAM


@pytest.fixture
def in_empty(empty_workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(empty_workspace)
    return empty_workspace


def assert_envelope(envelope: dict[str, Any], ok: bool = True) -> None:
    assert set(envelope) == {"contract_version", "ok", "data", "diagnostics"}
    assert envelope["contract_version"] == 1
    assert envelope["ok"] is ok
    assert isinstance(envelope["data"], dict)
    assert isinstance(envelope["diagnostics"], list)


def test_init_creates_the_store_and_is_idempotent(in_empty: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """init creates memory/, working/ and a .gitignore of derived files; a second run changes nothing."""
    assert main(["init"]) == 0
    root = in_empty / ".engram"
    assert (root / "memory").is_dir() and (root / "working").is_dir()
    ignored = (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    for line in ("working/", "index.json", "usage.json", "pending-approvals.json", "*.lock"):
        assert line in ignored
    assert "created" in capsys.readouterr().out
    gitignore = (root / ".gitignore").read_bytes()
    code, envelope = run_json(capsys, "init")
    assert code == 0
    assert envelope["data"]["created"] == []
    assert (root / ".gitignore").read_bytes() == gitignore


def test_reads_on_a_missing_store_say_so(in_empty: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without .engram/, search answers empty with an ENGRAM_EMPTY diagnostic."""
    code, envelope = run_json(capsys, "search", "anything")
    assert code == 0
    assert envelope["data"]["entries"] == []
    assert "ENGRAM_EMPTY" in [d["code"] for d in envelope["diagnostics"]]


def test_status_reports_counts(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """status counts project, user, superseded memories and live notes."""
    assert main(["status"]) == 0
    assert "memories: 40 project, 6 user, 1 superseded, 0 retired, 2 working notes" in capsys.readouterr().out
    code, envelope = run_json(capsys, "status")
    assert code == 0
    assert_envelope(envelope)
    assert envelope["data"]["counts"] == {
        "project": 40,
        "user": 6,
        "superseded": 1,
        "retired": 0,
        "notes": 2,
        "invalid": 0,
    }
    assert len(envelope["data"]["index"]["hash"]) == 12


def test_search_json_prints_the_envelope(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """search --json prints {contract_version: 1, ok, data, diagnostics}."""
    code, envelope = run_json(capsys, "search", "webhook retry backoff", "--limit", "3")
    assert code == 0
    assert_envelope(envelope)
    entries = envelope["data"]["entries"]
    assert len(entries) == 3
    assert entries[0]["id"] == "payment-webhook-retry-backoff"
    assert set(entries[0]) == {"id", "type", "scope", "score", "title", "snippet"}
    assert envelope["data"]["backends_used"] == ["bm25"]


def test_search_text_lists_results(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Plain search prints numbered results with ids."""
    assert main(["search", "rotate stripe webhook signing secret", "--type", "procedure"]) == 0
    out = capsys.readouterr().out
    assert "1. [procedure] " in out and "(rotate-stripe-webhook-secret)" in out


def test_route_lists_memories_in_load_order(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """route prints the task class and entries with tiers and reasons."""
    code, envelope = run_json(capsys, "route", "fix the crash in api/billing/tax.py")
    assert code == 0
    assert_envelope(envelope)
    assert envelope["data"]["task_class"] == "bugfix"
    assert envelope["data"]["entries"][0]["tier"] == "core"
    assert main(["route", "fix the crash"]) == 0
    assert "Task class: bugfix." in capsys.readouterr().out


def test_load_by_id_prints_that_body(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """load --id prints exactly that memory, quoted, and counts the fetch."""
    assert main(["load", "--id", "invoice-rounding-rules"]) == 0
    out = capsys.readouterr().out
    assert "`invoice-rounding-rules`" in out and "ROUND_HALF_EVEN" in out
    usage = json.loads((ws / ".engram" / "usage.json").read_text(encoding="utf-8"))
    assert len(usage.pop("_tag")) == 64  # keyed by the per-user secret (SPEC §2)
    assert usage == {"invoice-rounding-rules": 1}


def test_load_respects_budget(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """load --budget keeps tokens within the budget."""
    code, envelope = run_json(capsys, "load", "fix the crash in the invoice export", "--budget", "1000")
    assert code == 0
    assert_envelope(envelope)
    data = envelope["data"]
    assert data["tokens"] <= 1000
    assert data["body_keys"] + data["card_ids"] + data["omitted_ids"] == data["selected_keys"]


def test_load_full_gives_every_active_memory(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """load --full selects all 46 active durable memories."""
    code, envelope = run_json(capsys, "load", "--full")
    assert code == 0
    assert len(envelope["data"]["selected_keys"]) == 46
    assert "use-pip-tools-for-locking" not in envelope["data"]["selected_keys"]


def test_load_explain_says_why(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """load --explain adds a reason per selected id, in text and JSON."""
    assert main(["load", "fix the crash", "--explain"]) == 0
    assert "Why:\n- money-is-integer-cents: core: always loaded" in capsys.readouterr().out
    code, envelope = run_json(capsys, "load", "fix the crash", "--explain")
    reasons = envelope["data"]["reasons"]
    assert set(reasons) == set(envelope["data"]["selected_keys"])


def test_an_unknown_id_exits_1_with_not_found(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A well-formed id with no memory is a fixable failure: exit 1, ENGRAM_NOT_FOUND on stderr."""
    assert main(["load", "--id", "no-such-memory"]) == 1
    captured = capsys.readouterr()
    assert "ENGRAM_NOT_FOUND" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_an_unknown_id_with_json_prints_a_failed_envelope(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json failures are envelopes with ok false and the code in diagnostics."""
    code, envelope = run_json(capsys, "load", "--id", "no-such-memory")
    assert code == 1
    assert_envelope(envelope, ok=False)
    assert envelope["diagnostics"][0]["code"] == "ENGRAM_NOT_FOUND"


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "uv", "--limit", "0"],
        ["search", "uv", "--limit", "51"],
        ["search", "uv", "--type", "essay"],
        ["load", "--budget", "5"],
        ["load", "--id", "../../etc/passwd"],
    ],
)
def test_out_of_bounds_arguments_exit_2(
    ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """Arguments the tool schema refuses are usage errors: exit 2 with a message on stderr."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"engram {argv[0]}: ")
    assert "Traceback" not in captured.err


def test_an_unknown_subcommand_is_a_usage_error(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown command exits 2, naming it and where the commands are listed (issue 22)."""
    assert main(["frobnicate"]) == 2
    assert capsys.readouterr().err == (
        "engram: unknown command 'frobnicate'. `engram --help` lists the commands.\n"
    )


def test_a_non_integer_limit_is_a_usage_error(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """argparse exits 2 for --limit many."""
    with pytest.raises(SystemExit) as caught:
        main(["search", "uv", "--limit", "many"])
    assert caught.value.code == 2
    capsys.readouterr()


def test_verify_exits_1_for_files_not_yet_recorded(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Memory files engram never recorded (added by hand) make verify exit 1 and point to --accept."""
    assert main(["verify"]) == 1
    assert "verify --accept" in capsys.readouterr().out


def test_verify_accept_exits_0_and_a_later_edit_exits_1(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """verify --accept exits 0, verify stays 0, and a later hand edit makes it exit 1."""
    assert main(["verify", "--accept"]) == 0
    assert "OK: every memory file matches what engram recorded." in capsys.readouterr().out
    assert main(["verify"]) == 0
    capsys.readouterr()
    with (ws / ".engram" / "memory" / "use-uv-for-python.md").open("ab") as handle:
        handle.write(b"Hand edit.\n")
    code, envelope = run_json(capsys, "verify")
    assert code == 1
    assert_envelope(envelope, ok=True)  # the command ran; data.ok is its verdict
    assert envelope["data"]["ok"] is False
    assert envelope["data"]["mismatched"] == ["use-uv-for-python"]


def test_verify_exits_1_for_a_hand_edit_after_accept(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After accept, an edited file is reported as mismatched with exit 1."""
    assert main(["verify", "--accept"]) == 0
    (ws / ".engram" / "memory" / "cut-a-release.md").unlink()
    assert main(["verify"]) == 1
    assert "Recorded but the file is gone: cut-a-release" in capsys.readouterr().out


def test_read_only_makes_verify_accept_a_usage_error(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENGRAM_READ_ONLY=1 refuses verify --accept with exit 2 and writes no index."""
    monkeypatch.setenv("ENGRAM_READ_ONLY", "1")
    assert main(["verify", "--accept"]) == 2
    assert "ENGRAM_READ_ONLY" in capsys.readouterr().err
    assert not (ws / ".engram" / "index.json").exists()


def test_the_workspace_option_selects_the_store(
    workspace: Path,
    empty_workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--workspace DIR reads that workspace whatever the current directory."""
    monkeypatch.chdir(empty_workspace)
    code, envelope = run_json(capsys, "--workspace", str(workspace), "status")
    assert code == 0
    assert envelope["data"]["counts"]["project"] == 40


def test_the_console_script_prints_its_version(tmp_path: Path) -> None:
    """The installed `engram` script answers --version."""
    done = subprocess.run([ENGRAM, "--version"], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.strip() == f"engram {__version__}"
