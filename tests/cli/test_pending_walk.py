"""`engram pending` at the human's terminal walks each waiting candidate and asks y/N/q
(issue 23, Build 5), in-process with a terminal for stdin and stdout."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli import review_walk
from engram_mcp.cli.main import main
from engram_mcp.ops import agent_shell
from store.store import Store
from store.write import curate
from tests.support.terminal import Terminal
from tests.support.tools import call_tool

TOKEN_RE = re.compile(r"approval token: (engram-\S+)")
CANDIDATES = [
    {"type": "fact", "title": "The wobbegong cache warms in forty minutes", "body": "Forty minutes, cold."},
    {"type": "fact", "title": "The zorblax job runs at noon", "body": "Noon, every weekday."},
    {"type": "fact", "title": "The quokka queue drains on Fridays", "body": "Fridays after the deploy."},
]
IDS = [
    "the-wobbegong-cache-warms-in-forty-minutes",
    "the-zorblax-job-runs-at-noon",
    "the-quokka-queue-drains-on-fridays",
]


def propose(ws: Path, candidates: Sequence[Mapping[str, object]]) -> str:
    """An agent's `engram_save` without a dialog: the proposal waits, its token went to the agent."""
    result = call_tool(ws, "engram_save", {"candidates": list(candidates)})
    assert result.structured is not None
    token = result.structured["data"]["approval_token"]
    assert isinstance(token, str)
    return token


def answered(monkeypatch: pytest.MonkeyPatch, answers: str, *, tty: bool = True) -> None:
    """stdin a terminal holding the human's answers; stdout a terminal too unless not `tty`
    (pytest's capture is not one: it is patched where the test runs, not in a fixture)."""
    monkeypatch.setattr(sys, "stdin", Terminal(answers))
    if tty:
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)


def memory(ws: Path, memory_id: str) -> Path:
    return ws / ".engram" / "memory" / f"{memory_id}.md"


def waiting(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """The waiting proposals, as `engram pending --json` lists them."""
    capsys.readouterr()
    assert main(["pending", "--json"]) == 0
    proposals: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["data"]["proposals"]
    return proposals


def test_yes_no_yes_writes_exactly_the_approved_candidates(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """engram's choice: y writes, n declines, no token asked; the proposal is then closed."""
    assert main(["verify", "--accept"]) == 0  # the fixture's files, added by hand, reviewed
    token = propose(ws, CANDIDATES)
    answered(monkeypatch, "y\nn\nyes\n")
    assert main(["pending"]) == 0
    out, err = capsys.readouterr()
    assert err.count(review_walk.QUESTION) == 3
    assert "2. Verdict: ADD" in err and "→ the-zorblax-job-runs-at-noon (project)" in err
    assert "| Noon, every weekday." in err
    assert memory(ws, IDS[0]).exists() and memory(ws, IDS[2]).exists()
    assert not memory(ws, IDS[1]).exists()
    assert "Saved 2 memories" in out and "Declined candidate 2." in out
    assert waiting(capsys) == []
    assert main(["commit", token]) == 1  # the human's walk closed it
    assert main(["verify"]) == 0  # engram's own writes, sealed as the human's


def test_quit_writes_what_was_approved_and_leaves_the_rest_pending_under_their_numbers(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23: a partial approval keeps the rest; the next walk asks about them, numbered as first shown."""
    token = propose(ws, CANDIDATES)
    answered(monkeypatch, "y\nq\n")
    assert main(["pending"]) == 0
    out, _ = capsys.readouterr()
    assert "Still waiting: candidates 2, 3." in out and "1 proposal is still waiting" in out
    assert [memory(ws, i).exists() for i in IDS] == [True, False, False]
    [left] = waiting(capsys)
    assert [c["n"] for c in left["candidates"]] == [2, 3]
    answered(monkeypatch, "n\ny\n")
    assert main(["pending"]) == 0
    out, err = capsys.readouterr()
    assert "1. Verdict" not in err and "2. Verdict: ADD" in err and "3. Verdict: ADD" in err
    assert [memory(ws, i).exists() for i in IDS] == [True, False, True]
    assert "Declined candidate 2." in out
    assert waiting(capsys) == []
    assert main(["commit", token]) == 1


def test_end_of_input_leaves_every_candidate_pending(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing answered, nothing decided: at once, or after an answer that was asked again."""
    propose(ws, CANDIDATES)
    for answers in ("", "maybe\n"):
        answered(monkeypatch, answers)
        assert main(["pending"]) == 0
        out, _ = capsys.readouterr()
        assert "1 proposal is still waiting" in out
        assert not any(memory(ws, i).exists() for i in IDS)
        [left] = waiting(capsys)
        assert [c["n"] for c in left["candidates"]] == [1, 2, 3]


def test_every_no_declines_the_proposal_and_the_next_one_is_asked(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = {propose(ws, CANDIDATES[:1]): IDS[0], propose(ws, CANDIDATES[1:2]): IDS[1]}
    first = waiting(capsys)[0]["ref"]  # made in the same second: listed by ref
    [declined] = [t for t in tokens if hashlib.sha256(t.encode()).hexdigest().startswith(str(first))]
    answered(monkeypatch, "n\ny\n")
    assert main(["pending"]) == 0
    out, err = capsys.readouterr()
    assert "Proposal 1 of 2" in err and "Proposal 2 of 2" in err
    assert "nothing was saved.\nDeclined candidate 1." in out
    assert [memory(ws, i).exists() for i in tokens.values()] == [t != declined for t in tokens]
    assert main(["commit", declined]) == 1
    assert (
        "ENGRAM_DECLINED: approval was declined at the terminal (engram pending)" in capsys.readouterr().err
    )


def test_an_other_answer_is_asked_again(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    propose(ws, CANDIDATES[:1])
    answered(monkeypatch, "maybe\ny\n")
    assert main(["pending"]) == 0
    _, err = capsys.readouterr()
    assert review_walk.AGAIN in err and err.count(review_walk.QUESTION) == 2
    assert memory(ws, IDS[0]).exists()


def test_off_a_terminal_it_lists_and_asks_nothing(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """stdout is not a terminal (pytest's capture): the list, with the way to review."""
    propose(ws, CANDIDATES)
    answered(monkeypatch, "y\ny\ny\n", tty=False)
    assert main(["pending"]) == 0
    out, err = capsys.readouterr()
    assert review_walk.QUESTION not in err
    assert review_walk.HINT in out and "its token was printed" not in out
    assert not any(memory(ws, i).exists() for i in IDS)
    assert sys.stdin.read() == "y\ny\ny\n"  # nothing was read


def test_json_on_a_terminal_lists_and_asks_nothing(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    propose(ws, CANDIDATES)
    answered(monkeypatch, "y\ny\ny\n")
    assert len(waiting(capsys)) == 1
    assert not any(memory(ws, i).exists() for i in IDS)


def test_in_an_agents_shell_the_walk_refuses_and_writes_nothing(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC §7: a terminal the agent's host opened is not the human's (as `engram commit`)."""
    propose(ws, CANDIDATES)
    before = (ws / ".engram" / "pending-approvals.json").read_bytes()
    shell = agent_shell.Observation(stdin_tty=True, controlling_tty=True, environ={"CLAUDECODE": "1"})
    monkeypatch.setattr(agent_shell, "observe", lambda: shell)
    answered(monkeypatch, "y\ny\ny\n")
    assert main(["pending"]) == 1
    out, err = capsys.readouterr()
    assert "ENGRAM_AGENT_SHELL" in err and "CLAUDECODE set" in err and "engram_commit" not in err
    assert review_walk.QUESTION not in err and out == ""
    assert not any(memory(ws, i).exists() for i in IDS)
    assert (ws / ".engram" / "pending-approvals.json").read_bytes() == before


def test_an_update_shows_its_diff_against_the_memory_it_changes(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = memory(ws, "use-uv-for-python")
    old = target.read_text("utf-8")
    update: dict[str, object] = {
        "type": "rule",
        "id": "use-uv-for-python",
        "title": "Use uv for Python environments",
        "body": "Create and sync environments with `uv`; `uv sync --frozen` in CI.",
        "tags": ["python"],
    }
    propose(ws, [update])
    answered(monkeypatch, "n\n")
    assert main(["pending"]) == 0
    _, err = capsys.readouterr()
    assert "Verdict: UPDATE use-uv-for-python" in err
    assert "body, against use-uv-for-python's (- removed, + added):" in err
    assert "- | Create and sync environments with `uv`, never bare `pip install`" in err
    assert "+ | Create and sync environments with `uv`; `uv sync --frozen` in CI." in err
    assert "! this update drops" in err and "the tag tooling" in err
    assert target.read_text("utf-8") == old


def test_a_candidate_whose_memory_changed_meanwhile_is_not_saved_and_says_why(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same commit path as `engram commit`: verdicts re-checked, the deferral in plain words."""
    propose(ws, CANDIDATES[:1])
    assert main(["add", "fact", CANDIDATES[0]["title"], "Forty minutes, cold.", "--yes"]) == 0
    capsys.readouterr()
    answered(monkeypatch, "y\n")
    assert main(["pending"]) == 0
    out, _ = capsys.readouterr()
    assert "Not saved: already saved as the-wobbegong-cache-warms-in-forty-minutes" in out


def test_control_characters_of_a_memory_are_escaped_on_the_terminal(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory file from a clone can hold a terminal escape; the diff shows it escaped."""
    target = memory(ws, "use-uv-for-python")
    target.write_text(target.read_text("utf-8") + "\x1b]0;owned\x07 trailing line\n", "utf-8")
    update: dict[str, object] = {
        "type": "rule",
        "id": "use-uv-for-python",
        "title": "Use uv for Python environments",
        "body": "Create and sync environments with `uv`.",
        "tags": ["python", "tooling"],
    }
    propose(ws, [update])
    answered(monkeypatch, "q\n")
    assert main(["pending"]) == 0
    _, err = capsys.readouterr()
    assert "\x1b" not in err and "\x07" not in err
    assert "\\x1b]0;owned\\x07" in err


def test_a_proposal_cancelled_while_it_was_read_is_said_so_and_nothing_is_written(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk holds no lock while the human reads: the decision re-checks the proposal."""
    propose(ws, CANDIDATES[:1])

    class Meanwhile(Terminal):
        def readline(self, size: int | None = -1, /) -> str:  # type: ignore[override]
            store = Store(ws)
            try:
                curate.cancel(store, "1")  # another terminal cancels it while this one asks
            finally:
                store.close()
            return "y\n"

    monkeypatch.setattr(sys, "stdin", Meanwhile())
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["pending"]) == 0
    out, _ = capsys.readouterr()
    assert "it is no longer waiting" in out
    assert not memory(ws, IDS[0]).exists()
