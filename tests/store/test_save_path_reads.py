"""The save path reads each thing once: `draft` reads the memory each UPDATE or SUPERSEDE
changes, in the view its verdicts came from, and the preview, the dialog and `store_proposal`
take it from there. `store_proposal` reads it again only when the store changed since."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.store import Store
from store.write import proposals
from tests.support.proposals import NOW
from tests.support.store_helpers import write_memory

MEMORY = "run-make-check-before-pushing"
TITLE = "Run make check before pushing"
BODY = "make check runs ruff, mypy and pytest.\n"


def _update(workspace: Path) -> tuple[Store, list[proposals.ProposalEntry]]:
    write_memory(workspace, MEMORY, title=TITLE, body=BODY, type="rule", tags=["ci"])
    store = Store(workspace, clock=lambda: NOW)
    raw = {"type": "rule", "title": TITLE, "id": MEMORY, "tags": ["ci"], "body": BODY + "And npm test.\n"}
    entries, _ = proposals.draft(store, [raw])
    assert entries[0].verdict.kind == "UPDATE"
    return store, entries


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    read = proposals.targets

    def counting(*args: object, **kwargs: object) -> dict[int, proposals.Before]:
        calls.append(1)
        return read(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(proposals, "targets", counting)
    return calls


def test_a_draft_carries_its_targets_and_the_store_reuses_them(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, entries = _update(workspace)
    drafted = proposals.drafted(entries)
    assert drafted[1].id == MEMORY and drafted[1].body.strip() == BODY.strip() and not drafted[1].changed
    calls = _counted(monkeypatch)
    preview = proposals.store_proposal(store, entries, 0, "save")
    assert calls == []  # nothing changed since the draft: not read again
    assert preview.before == drafted


def test_a_target_edited_between_draft_and_store_is_read_again(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, entries = _update(workspace)
    write_memory(workspace, MEMORY, title=TITLE, body="Edited meanwhile.\n", type="rule", tags=["ci"])
    calls = _counted(monkeypatch)
    preview = proposals.store_proposal(store, entries, 0, "save")
    assert calls == [1]
    assert preview.before[1].body.strip() == "Edited meanwhile." and preview.before[1].changed


def test_the_before_is_shown_not_stored(workspace: Path) -> None:
    """The entry's stored form is what it was: the commit reads the memory itself."""
    _, entries = _update(workspace)
    assert entries[0].before is not None
    assert "before" not in entries[0].record()
    assert proposals.ProposalEntry.of(entries[0].record()) == entries[0]
