"""A commit takes the proposal's verdicts while its view has the stamp they were judged in
(`judged`, transaction.view_stamp), and judges again otherwise: after any change to the
memories, in another Store object, or for a proposal that carries no stamp."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.store import Store
from store.write import commits, proposals, transaction
from store.write.approvals import Pending, integrity_tag, token_hash
from tests.support.gitrepo import memory
from tests.support.proposals import BODY, TITLE, candidate, fixed


def _propose_judged(store: Store, title: str = TITLE, body: str = BODY) -> str:
    """A `save` proposal: its record carries the stamp of the view its verdicts came from."""
    entries, redactions = proposals.draft(store, [candidate(title, body)])
    stamp = transaction.view_stamp(store, store.view(recent_ok=True))
    token = proposals.store_proposal(store, entries, redactions, "save").token
    assert _record(store, token)["judged"] == stamp
    return token


def _record(store: Store, token: str) -> dict[str, object]:
    record: dict[str, object] = Pending.read(store.project.pending_path, store.key).records[token_hash(token)]
    return record


def _unstamped(store: Store, token: str) -> None:
    """The record as an engram before stamps wrote it: no `judged`, tag intact."""
    with transaction.write_lock(store, memories=False):
        pending = Pending.read(store.project.pending_path, store.key)
        hashed = token_hash(token)
        record = pending.records[hashed]
        del record["judged"]
        record["tag"] = integrity_tag(pending.key(), hashed, record)
        transaction.apply(store, [(store.project.pending_path, pending.render(store.now()))])


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    judged: list[int] = []

    def counting(*args: object, **kwargs: object) -> object:
        judged.append(1)
        return proposals.verdicts(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(commits, "verdicts", counting)
    return judged


def test_an_unchanged_view_takes_the_proposal_s_verdicts(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = _propose_judged(store)
    judged = _counting(monkeypatch)
    report = commits.commit(store, token, "all")
    assert judged == []
    assert len(report.written) == 1 and not report.deferred
    assert report.written[0]["verdict"].startswith("ADD")


def test_a_changed_view_judges_again_and_defers_what_changed(
    store: Store, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = _propose_judged(store)
    memory(workspace, "frobnicate-the-quux-widgets-nightly-2", TITLE, BODY)  # the same text, by hand
    judged = _counting(monkeypatch)
    report = commits.commit(store, token, "all")
    assert judged == [1]
    assert not report.written and report.deferred[0]["reason"].startswith("the store changed")


def test_another_store_or_no_stamp_judges_again(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = Store(workspace, clock=fixed())
    token = _propose_judged(first)
    judged = _counting(monkeypatch)
    report = commits.commit(Store(workspace, clock=fixed()), token, "all")
    assert judged == [1] and report.written
    plain = proposals.store_proposal(
        first, *proposals.draft(first, [candidate("Quux widgets rest on Sundays", BODY[:60])]), "save"
    )
    _unstamped(first, plain.token)
    commits.commit(first, plain.token, "all")
    assert judged == [1, 1]
