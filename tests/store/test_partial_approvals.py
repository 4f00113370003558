"""Partial approvals keep the rest (issue 23, Build 3): approving some candidates of a proposal
leaves the others pending under the same token, until they are approved, declined or expire.

engram's own choices, pinned here: a request naming a candidate already decided is refused
whole (ENGRAM_VALIDATION, nothing written, the rest still pending); `all` means every candidate
still pending; a partly approved proposal expires 30 minutes after it was made; declining is a
store call for the human's own surfaces, never an MCP tool.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from engram_mcp.mcp.app import server_spec
from engram_mcp.mcp.tools.base import Flags
from engram_mcp.mcp.tools.write_tools import COMMIT_INPUT
from engram_mcp.ops import write_ops
from protocol.spec import ElicitAnswer
from store import status as store_status
from store.errors import InvalidSelection, TokenRefused
from store.store import Store
from store.write import commits
from store.write.approvals import states, token_hash
from tests.support.cli import run, run_json
from tests.support.proposals import NOW, fixed
from tests.support.proposals import propose as propose_on
from tests.support.tools import call_tool

CANDIDATES = [
    {
        "type": "fact",
        "title": "The zorblax kiln fires at dawn",
        "body": "The zorblax kiln is fired at dawn on weekdays; firing it later cracks the glaze.",
    },
    {
        "type": "gotcha",
        "title": "Quokka sieves clog in humid weather",
        "body": "The quokka sieves clog whenever the humidity passes seventy percent; dry them first.",
    },
    {
        "type": "decision",
        "title": "Wobbegong ledgers stay in octal",
        "body": "We keep the wobbegong ledgers in octal notation, as the auditors read them that way.",
    },
]
IDS = (
    "the-zorblax-kiln-fires-at-dawn",
    "quokka-sieves-clog-in-humid-weather",
    "wobbegong-ledgers-stay-in-octal",
)


@pytest.fixture(autouse=True)
def at(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Set engram's clock (ENGRAM_NOW) to NOW plus some minutes, for the CLI and the tools (and
    at NOW, where `Store(clock=fixed())` stands, from the start)."""

    def move(minutes: float) -> None:
        monkeypatch.setenv("ENGRAM_NOW", str(int(NOW + minutes * 60)))

    move(0)
    return move


def memory(ws: Path, memory_id: str) -> Path:
    return ws / ".engram" / "memory" / f"{memory_id}.md"


def propose(ws: Path) -> str:
    """Three unrelated ADDs proposed through engram_save (no dialog): the token."""
    result = call_tool(ws, "engram_save", {"candidates": CANDIDATES})
    assert not result.is_error, result.text
    assert result.structured is not None
    token: str = result.structured["data"]["approval_token"]
    return token


def commit_tool(ws: Path, token: str, approve: Any) -> dict[str, Any]:
    result = call_tool(ws, "engram_commit", {"approval_token": token, "approve": approve})
    assert result.structured is not None
    envelope: dict[str, Any] = result.structured
    return envelope


def codes(envelope: dict[str, Any]) -> list[str]:
    return [d["code"] for d in envelope["diagnostics"]]


def record(ws: Path, token: str) -> dict[str, Any]:
    data = orjson.loads((ws / ".engram" / "pending-approvals.json").read_bytes())
    found: dict[str, Any] = data["proposals"][token_hash(token)]
    return found


def test_approving_1_and_3_then_2_with_the_same_token_writes_2(
    ws: Path, at: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 23: `--approve 1,3` used to burn candidate 2 (ENGRAM_TOKEN_USED)."""
    token = propose(ws)
    code, out, _ = run(capsys, "commit", token, "--approve", "1,3")
    assert code == 0, out
    assert memory(ws, IDS[0]).exists() and memory(ws, IDS[2]).exists()
    assert not memory(ws, IDS[1]).exists()
    assert "Still pending: candidate 2; the same approval token commits it until 2026-12-01T12:30:00Z." in out

    at(5)
    code, out, _ = run(capsys, "commit", token, "--approve", "2")
    assert code == 0, out
    assert memory(ws, IDS[1]).exists()
    assert "Saved 1 memory: quokka-sieves-clog-in-humid-weather" in out and "Still pending" not in out
    assert record(ws, token)["status"] == "used"
    code, _, err = run(capsys, "commit", token)
    assert code == 1 and "ENGRAM_TOKEN_USED" in err


def test_all_after_a_partial_approval_writes_only_what_is_left(ws: Path, at: Any) -> None:
    """engram's choice: `all` names every candidate still pending, not the decided ones again."""
    token = propose(ws)
    first = commit_tool(ws, token, [2])
    assert first["ok"] and first["data"]["pending"] == [1, 3]
    rest = commit_tool(ws, token, "all")
    assert rest["ok"], rest
    assert [w["n"] for w in rest["data"]["written"]] == [1, 3] and "pending" not in rest["data"]
    assert all(memory(ws, i).exists() for i in IDS)


def test_approving_1_again_is_refused_for_1_and_decides_nothing(
    ws: Path, at: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """engram's choice: the whole request is refused, so 2 named beside a saved 1 stays pending."""
    token = propose(ws)
    assert commit_tool(ws, token, [1, 3])["ok"]
    before = record(ws, token)

    again = commit_tool(ws, token, [1, 2])
    assert not again["ok"] and codes(again) == ["ENGRAM_VALIDATION"]
    message = again["diagnostics"][0]["message"]
    assert "candidate 1 was already saved; still pending: 2" in message
    assert not memory(ws, IDS[1]).exists()
    assert record(ws, token) == before

    code, _, err = run(capsys, "commit", token, "--approve", "3")
    assert code == 1 and "ENGRAM_VALIDATION" in err and "candidate 3 was already saved" in err
    assert commit_tool(ws, token, [2])["ok"] and memory(ws, IDS[1]).exists()


def test_each_decision_is_recorded_with_where_it_was_made(
    ws: Path, at: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    token = propose(ws)
    assert commit_tool(ws, token, [1])["ok"]
    at(1)
    assert run(capsys, "commit", token, "--approve", "3")[0] == 0
    decided = record(ws, token)["decided"]
    assert decided == {
        "1": {"state": "written", "where": "agent", "at": int(NOW)},
        "3": {"state": "written", "where": "cli", "at": int(NOW + 60)},
    }
    assert record(ws, token)["status"] == "pending"


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda r: r["decided"]["1"].update(state="pending"), id="saved-set-back-to-pending"),
        pytest.param(lambda r: r.pop("decided"), id="decisions-removed"),
        pytest.param(
            lambda r: r["decided"].update({"2": {"state": "declined", "where": "ui", "at": 0}}),
            id="one-declined",
        ),
    ],
)
def test_a_record_edited_after_a_partial_approval_fails_integrity(ws: Path, at: Any, edit: Any) -> None:
    """The tag covers the per-candidate states: an edit of them is an edit of the proposal."""
    token = propose(ws)
    assert commit_tool(ws, token, [1, 3])["ok"]
    path = ws / ".engram" / "pending-approvals.json"
    data = orjson.loads(path.read_bytes())
    edit(data["proposals"][token_hash(token)])
    path.write_bytes(orjson.dumps(data))
    saved = memory(ws, IDS[0]).read_bytes()

    for approve in ([1], [2], "all"):
        refused = commit_tool(ws, token, approve)
        assert codes(refused) == ["ENGRAM_INTEGRITY"], (approve, refused)
    assert not memory(ws, IDS[1]).exists() and memory(ws, IDS[0]).read_bytes() == saved


def test_pending_lists_only_the_remaining_candidate_under_its_number(
    ws: Path, at: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    token = propose(ws)
    assert commit_tool(ws, token, [1, 3])["ok"]
    code, envelope = run_json(capsys, "pending")
    assert code == 0
    [proposal] = envelope["data"]["proposals"]
    assert [(c["n"], c["id"]) for c in proposal["candidates"]] == [(2, IDS[1])]
    code, out, _ = run(capsys, "pending")
    assert "1 candidate" in out and f"   2. ADD {IDS[1]}" in out and IDS[0] not in out


def test_a_partly_approved_proposal_expires_30_minutes_after_it_was_made(
    ws: Path, at: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """engram's choice: an approval does not extend the proposal's life."""
    token = propose(ws)
    at(20)
    assert commit_tool(ws, token, [1])["ok"]
    at(29)
    assert commit_tool(ws, token, [2])["ok"]
    at(31)
    expired = commit_tool(ws, token, [3])
    assert codes(expired) == ["ENGRAM_TOKEN_EXPIRED"]
    assert not memory(ws, IDS[2]).exists()
    assert run_json(capsys, "pending")[1]["data"]["proposals"] == []


def test_decline_writes_nothing_and_keeps_the_rest(ws: Path) -> None:
    """The store-level decline (the terminal walk, engram ui): by ref, as `engram pending` shows it."""
    token = propose(ws)
    store = Store(ws, clock=fixed())
    ref = token_hash(token)[:12]
    report = commits.decline(store, ref, [2], "cli")
    assert report.written == [] and report.declined == [2] and report.pending == [1, 3]
    assert not any(memory(ws, i).exists() for i in IDS)

    refused = commit_tool(ws, token, [2])
    assert codes(refused) == ["ENGRAM_VALIDATION"]
    assert "candidate 2 was already declined" in refused["diagnostics"][0]["message"]
    assert commit_tool(ws, token, [1])["ok"]
    assert states(record(ws, token)) == {1: "written", 2: "declined", 3: "pending"}
    last = commits.decline(store, token, [3], "ui")  # a token names it too
    assert last.pending == [] and record(ws, token)["status"] == "used"


def test_declining_every_candidate_declines_the_proposal_saying_where(ws: Path) -> None:
    token = propose(ws)
    store = Store(ws, clock=fixed())
    commits.decline(store, token_hash(token), [1, 3], "cli")
    commits.decline(store, token_hash(token), [2], "cli")
    refused = commit_tool(ws, token, "all")
    assert codes(refused) == ["ENGRAM_DECLINED"]
    assert "declined at the terminal (engram pending)" in refused["diagnostics"][0]["message"]
    with pytest.raises(TokenRefused) as info:
        commits.decline(store, token_hash(token)[:12], [1], "cli")
    assert info.value.code == "ENGRAM_DECLINED"


def test_decide_approves_and_declines_at_once_and_refuses_both_for_one(ws: Path) -> None:
    token = propose(ws)
    store = Store(ws, clock=fixed())
    with pytest.raises(InvalidSelection, match="candidate 2 cannot be both approved and declined"):
        commits.decide(store, token_hash(token), approve=[1, 2], decline=[2], where="ui")
    with pytest.raises(InvalidSelection, match="but this proposal has candidates 1 to 3"):
        commits.decide(store, token_hash(token), decline=[4], where="ui")
    assert not any(memory(ws, i).exists() for i in IDS)
    report = commits.decide(store, token_hash(token), approve=[1], decline=[2, 3], where="ui")
    assert [w["n"] for w in report.written] == [1] and report.declined == [2, 3] and report.pending == []
    assert codes(commit_tool(ws, token, "all")) == ["ENGRAM_TOKEN_USED"]


def test_a_ref_that_names_no_proposal_is_refused(ws: Path) -> None:
    propose(ws)
    store = Store(ws, clock=fixed())
    for ref in ("0" * 12, "short", "x" * 20):
        with pytest.raises(TokenRefused) as info:
            commits.decline(store, ref, [1], "cli")
        assert info.value.code == "ENGRAM_TOKEN_UNKNOWN"


def test_a_deferred_candidate_is_decided_too(ws: Path, at: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Approved but not saved (the store changed under it): approving it again says so."""
    token = propose(ws)
    body = CANDIDATES[1]["body"]
    assert run(capsys, "add", "gotcha", "Quokka sieves clog in humid weather", body, "--yes")[0] == 0
    assert run(capsys, "verify", "--accept")[0] == 0
    first = commit_tool(ws, token, [2])
    assert (
        first["ok"] and first["data"]["written"] == [] and [d["n"] for d in first["data"]["deferred"]] == [2]
    )
    again = commit_tool(ws, token, [2])
    assert codes(again) == ["ENGRAM_VALIDATION"]
    assert "candidate 2 was already approved, but not saved" in again["diagnostics"][0]["message"]
    assert states(record(ws, token))[2] == "deferred"


def test_declining_is_not_on_the_mcp_surface(ws: Path) -> None:
    """engram's choice: an agent that declined could hide a proposal from the human."""
    store = Store(ws)
    try:
        names = {t.name for t in server_spec(store, Flags(elicitation=False)).tools}
    finally:
        store.close()
    assert not any("decline" in name for name in names)
    assert set(COMMIT_INPUT["properties"]) == {"approval_token", "approve"}


def test_a_dialog_decline_records_each_candidate_declined_there(ws: Path) -> None:
    store = Store(ws, clock=fixed())
    preview = propose_on(store, CANDIDATES, status="declined")
    assert states(record(ws, preview.token)) == {1: "declined", 2: "declined", 3: "declined"}
    assert {d["where"] for d in record(ws, preview.token)["decided"].values()} == {"dialog"}
    refused = commit_tool(ws, preview.token, "all")
    assert "approval was declined in the approval dialog" in refused["diagnostics"][0]["message"]


def test_unticked_in_the_dialog_is_declined_and_named_so(ws: Path) -> None:
    """The dialog keeps no proposal afterwards: an unticked candidate is the human's no, and the
    result says so (the agent then does not propose it again unasked)."""
    store = Store(ws, clock=fixed())
    flow = write_ops.save(store, {"candidates": CANDIDATES})
    next(flow)
    with pytest.raises(StopIteration) as done:
        flow.send(ElicitAnswer("accept", {"candidate_1": True, "candidate_2": False, "scope": "all"}))
    outcome = done.value.value
    assert [w["n"] for w in outcome.data["written"]] == [1, 3]
    assert outcome.data["declined_candidates"] == [2] and "Declined: candidate 2." in outcome.text
    assert not memory(ws, IDS[1]).exists()
    assert waiting_count(ws) == 0


def waiting_count(ws: Path) -> int:
    """How many proposals wait in the workspace (none after a dialog)."""
    store = Store(ws, clock=fixed())
    try:
        return store_status.pending_count(store)
    finally:
        store.close()
