"""The commands for people (issue 12, SPEC §7) in-process: add, list, show, edit, forget,
restore, pending; and `always` on the tools' save path."""

from __future__ import annotations

import hashlib
import io
import re
import sys
from pathlib import Path

import pytest

from engram_mcp.cli.main import main
from store.files.memory import split_front_matter
from tests.support.cli import run_json
from tests.support.terminal import Terminal
from tests.support.tools import call_tool

TOKEN_RE = re.compile(r"approval token: (engram-\S+)")
MEMORY = "the-zorblax-quantifier-is-recalibrated-fortnightly"
ADD = [
    "add",
    "fact",
    "The zorblax quantifier is recalibrated fortnightly",
    "Ops recalibrates it every other Monday.",
]


def memory_file(ws: Path, memory_id: str) -> Path:
    return ws / ".engram" / "memory" / f"{memory_id}.md"


def accepted(capsys: pytest.CaptureFixture[str]) -> None:
    """Record the fixture files (added by hand) as reviewed, so verify starts clean."""
    assert main(["verify", "--accept"]) == 0
    assert main(["verify"]) == 0
    capsys.readouterr()


# --- add -------------------------------------------------------------------------------------


def test_add_with_yes_writes_the_memory_and_verify_stays_clean(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`engram add … --yes` saves through the commit path and is sealed (issue 12)."""
    accepted(capsys)
    code, envelope = run_json(capsys, *ADD, "--tag", "ops", "--path", "ops/**", "--always", "--yes")
    assert code == 0, envelope
    assert envelope["ok"] is True
    assert envelope["data"]["written"][0]["id"] == MEMORY
    assert envelope["data"]["candidates"][0]["always"] is True
    meta, body = split_front_matter(memory_file(ws, MEMORY).read_text("utf-8"))
    assert meta["always"] is True and meta["tags"] == ["ops"] and meta["paths"] == ["ops/**"]
    assert "every other Monday" in body
    assert main(["verify"]) == 0


def test_add_off_a_terminal_without_yes_names_the_flag_and_writes_nothing(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(ADD) == 1
    err = capsys.readouterr().err
    assert "--yes" in err and "ENGRAM_NOT_CONFIRMED" in err
    assert not memory_file(ws, MEMORY).exists()


def test_add_on_a_terminal_shows_the_verdict_and_asks(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    assert main(ADD) == 0
    captured = capsys.readouterr()
    assert "Verdict: ADD" in captured.err and "[y/N]" in captured.err
    assert "Nothing was saved." in captured.out
    assert not memory_file(ws, MEMORY).exists()
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert main(ADD) == 0
    assert memory_file(ws, MEMORY).exists()


def test_add_reads_the_body_from_stdin(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("Body from a pipe, key sk-live-abcdefghijklmnop1234.\n"))
    code, envelope = run_json(capsys, "add", "gotcha", "Piped body gotcha", "-", "--yes")
    assert code == 0, envelope
    body = split_front_matter(memory_file(ws, "piped-body-gotcha").read_text("utf-8"))[1]
    assert "Body from a pipe" in body


def test_add_opens_the_editor_when_no_body_is_given(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    script = tmp_path / "editor.py"
    script.write_text("import sys\nopen(sys.argv[1], 'w').write('Written in the editor.\\n')\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    code, envelope = run_json(capsys, "add", "decision", "Editor written decision", "--yes")
    assert code == 0, envelope
    assert "Written in the editor." in memory_file(ws, "editor-written-decision").read_text("utf-8")


def test_add_of_known_text_is_noop_and_writes_nothing(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same verdicts as engram_save: a restated memory is NOOP (deferred), nothing written."""
    path = memory_file(ws, "use-uv-for-python")
    meta, body = split_front_matter(path.read_text("utf-8"))
    before = sorted(p.name for p in (ws / ".engram" / "memory").iterdir())
    code, envelope = run_json(capsys, "add", meta["type"], meta["title"], body, "--yes")
    assert code == 0
    assert envelope["data"]["written"] == []
    assert envelope["data"]["candidates"][0]["verdict"].startswith("NOOP")
    assert sorted(p.name for p in (ws / ".engram" / "memory").iterdir()) == before


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["add", "fact", "T", "B", "--tag", "x" * 80, "--yes"], "--tag"),
        (["add", "fact", "x" * 300, "B", "--yes"], "TITLE"),
        (["add", "fact", "T", "B", "--id", "Not An Id", "--yes"], "--id"),
    ],
)
def test_add_usage_errors_name_the_flag(
    ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("engram add: ") and flag in err
    assert "argument '" not in err


def test_add_with_an_unknown_type_is_a_usage_error(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["add", "essay", "T", "B"])
    assert caught.value.code == 2
    assert "TYPE" in capsys.readouterr().err


# --- always on the tools' save path ------------------------------------------------------------


def test_engram_save_candidates_may_carry_always(ws: Path) -> None:
    """engram_save accepts `always: true` and the commit writes it (issue 12)."""
    candidate = {
        "type": "rule",
        "title": "Wobbegong deploys need a pager",
        "body": "Page ops first.",
        "always": True,
    }
    proposal = call_tool(ws, "engram_save", {"candidates": [candidate]})
    assert not proposal.is_error, proposal
    assert proposal.structured is not None
    data = proposal.structured["data"]
    assert data["candidates"][0]["always"] is True
    done = call_tool(ws, "engram_commit", {"approval_token": data["approval_token"], "approve": "all"})
    assert not done.is_error, done
    meta = split_front_matter(memory_file(ws, "wobbegong-deploys-need-a-pager").read_text("utf-8"))[0]
    assert meta["always"] is True


# --- list and show ---------------------------------------------------------------------------


def test_list_filters_by_type_scope_and_status(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, envelope = run_json(capsys, "list")
    assert code == 0
    rows = envelope["data"]["memories"]
    assert {r["status"] for r in rows} == {"active"}
    assert "use-uv-for-python" in {r["id"] for r in rows}
    code, envelope = run_json(capsys, "list", "--type", "procedure", "--scope", "project")
    assert {(r["type"], r["scope"]) for r in envelope["data"]["memories"]} == {("procedure", "project")}
    code, envelope = run_json(capsys, "list", "--status", "superseded")
    assert [r["id"] for r in envelope["data"]["memories"]] == ["use-pip-tools-for-locking"]
    assert main(["list", "--type", "procedure"]) == 0
    assert "rotate-stripe-webhook-secret  [procedure]" in capsys.readouterr().out


def test_list_of_an_empty_store_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    assert main(["list"]) == 0
    assert "No memories yet" in capsys.readouterr().out


def test_show_prints_front_matter_and_body(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "use-uv-for-python"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(".engram/memory/use-uv-for-python.md\n---\n")
    assert "title: Use uv for Python environments" in out
    code, envelope = run_json(capsys, "show", "use-uv-for-python")
    assert code == 0
    assert envelope["data"]["meta"]["id"] == "use-uv-for-python"
    assert "uv" in envelope["data"]["body"]


def test_show_of_an_unknown_id_exits_1_naming_list(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "no-such-memory"]) == 1
    err = capsys.readouterr().err
    assert "ENGRAM_NOT_FOUND" in err and "engram list" in err and "engram_" not in err


# --- forget, restore, delete -----------------------------------------------------------------


def test_forget_retires_restore_brings_back_and_verify_stays_clean(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    accepted(capsys)
    assert main(["forget", "use-uv-for-python"]) == 0
    assert "engram restore use-uv-for-python" in capsys.readouterr().out
    meta = split_front_matter(memory_file(ws, "use-uv-for-python").read_text("utf-8"))[0]
    assert meta["status"] == "retired"
    code, envelope = run_json(capsys, "search", "uv python environments")
    assert "use-uv-for-python" not in [e["id"] for e in envelope["data"]["entries"]]
    code, envelope = run_json(capsys, "load", "--full")
    assert "use-uv-for-python" not in envelope["data"]["selected_keys"]
    code, envelope = run_json(capsys, "list", "--status", "retired")
    assert [r["id"] for r in envelope["data"]["memories"]] == ["use-uv-for-python"]
    assert main(["verify"]) == 0, capsys.readouterr()
    assert main(["restore", "use-uv-for-python"]) == 0
    capsys.readouterr()
    assert (
        split_front_matter(memory_file(ws, "use-uv-for-python").read_text("utf-8"))[0]["status"] == "active"
    )
    code, envelope = run_json(capsys, "search", "uv python environments")
    assert "use-uv-for-python" in [e["id"] for e in envelope["data"]["entries"]]
    assert main(["verify"]) == 0


def test_forget_delete_asks_then_removes_and_verify_stays_clean(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted(capsys)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["forget", "use-uv-for-python", "--delete"]) == 1
    assert "--yes" in capsys.readouterr().err
    assert memory_file(ws, "use-uv-for-python").exists()
    assert main(["forget", "use-uv-for-python", "--delete", "--yes"]) == 0
    capsys.readouterr()
    assert not memory_file(ws, "use-uv-for-python").exists()
    assert main(["verify"]) == 0, capsys.readouterr()


def test_forget_bad_paths(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forget", "no-such-memory"]) == 1
    assert "ENGRAM_NOT_FOUND" in capsys.readouterr().err
    assert main(["forget", "use-pip-tools-for-locking"]) == 1  # superseded: its successor names it
    assert "superseded" in capsys.readouterr().err
    assert main(["forget", "Bad Id"]) == 2
    assert "is not a memory id" in capsys.readouterr().err
    assert main(["restore", "use-uv-for-python"]) == 0
    assert "active already" in capsys.readouterr().out


# --- edit --------------------------------------------------------------------------------------


def _editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    script = tmp_path / "edit.py"
    script.write_text("import sys\npath = sys.argv[1]\ntext = open(path).read()\n" + code)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)


def test_edit_writes_a_valid_edit_and_verify_stays_clean(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    accepted(capsys)
    _editor(tmp_path, monkeypatch, "open(path, 'w').write(text + 'Edited by a person.\\n')\n")
    assert main(["edit", "use-uv-for-python"]) == 0
    assert "Saved use-uv-for-python" in capsys.readouterr().out
    assert memory_file(ws, "use-uv-for-python").read_text("utf-8").endswith("Edited by a person.\n")
    assert main(["verify"]) == 0


def test_edit_that_would_not_load_is_refused_with_the_reason(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    before = memory_file(ws, "use-uv-for-python").read_bytes()
    _editor(tmp_path, monkeypatch, "open(path, 'w').write(text.replace('type: rule', 'type: essay'))\n")
    assert main(["edit", "use-uv-for-python"]) == 1
    err = capsys.readouterr().err
    assert "would not load" in err and "type 'essay'" in err
    assert memory_file(ws, "use-uv-for-python").read_bytes() == before


def test_edit_without_an_editor_says_how(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    assert main(["edit", "use-uv-for-python"]) == 1
    assert "$EDITOR" in capsys.readouterr().err


# --- pending ----------------------------------------------------------------------------------


def _propose(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, line: str) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(line + "\n"))
    assert main(["save-session", "--text", "-"]) == 0
    found = TOKEN_RE.findall(capsys.readouterr().out)
    assert len(found) == 1
    return str(found[0])


def test_pending_lists_and_cancels_by_number_and_token(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _propose(capsys, monkeypatch, "Remember that the wobbegong cache warms in forty minutes.")
    second = _propose(capsys, monkeypatch, "Remember that the zorblax job runs at noon.")
    code, envelope = run_json(capsys, "pending")
    assert code == 0
    proposals = envelope["data"]["proposals"]
    assert [p["n"] for p in proposals] == [1, 2]
    assert proposals[0]["candidates"][0]["verdict"] == "ADD"
    assert main(["pending"]) == 0
    assert "engram pending --cancel N" in capsys.readouterr().out
    by_ref = {hashlib.sha256(t.encode()).hexdigest()[:12]: t for t in (first, second)}
    one, two = by_ref[proposals[0]["ref"]], by_ref[proposals[1]["ref"]]  # same second: listed by ref
    assert main(["pending", "--cancel", "1"]) == 0
    assert "Cancelled proposal 1" in capsys.readouterr().out
    assert main(["commit", one]) == 1
    assert "cancelled" in capsys.readouterr().err
    assert main(["pending", "--cancel", two]) == 0
    capsys.readouterr()
    assert main(["pending"]) == 0
    assert "No proposal is waiting" in capsys.readouterr().out
    assert main(["pending", "--cancel", "7"]) == 1
    assert "ENGRAM_NOT_FOUND" in capsys.readouterr().err


def test_add_takes_refs_and_valid_time_flags_and_names_the_flag_of_a_bad_date(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "app").mkdir()
    (ws / "app" / "billing.py").write_text("def refund(amount):\n    return -amount\n")
    assert (
        main(
            [
                "add",
                "fact",
                "Refund sign",
                "Refunds carry a minus sign.",
                "--ref",
                "app/billing.py#refund",
                "--review-after",
                "2027-01-01",
                "--yes",
            ]
        )
        == 0
    )
    text = (ws / ".engram" / "memory" / "refund-sign.md").read_text()
    assert "refs: [app/billing.py#refund]" in text and "review_after: '2027-01-01'" in text
    capsys.readouterr()
    assert main(["add", "fact", "Later", "Gone later.", "--valid-until", "2026-13-01", "--yes"]) == 2
    assert "--valid-until '2026-13-01' is not a date" in capsys.readouterr().err
    assert not (ws / ".engram" / "memory" / "later.md").exists()
