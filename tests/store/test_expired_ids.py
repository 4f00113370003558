"""The expired ids of a view are computed once per view and day: the same snapshots tuple on
the same day gives the kept answer, another view or another day is computed afresh."""

from __future__ import annotations

import pytest

from store.code import validity
from store.files.memory import Memory
from store.read.snapshot import Snapshot


def _memory(memory_id: str, valid_until: str = "") -> Memory:
    return Memory(
        memory_id, "project", "durable", memory_id, type="fact", title=memory_id, valid_until=valid_until
    )


def test_the_answer_is_kept_per_view_and_day(monkeypatch: pytest.MonkeyPatch) -> None:
    old = (Snapshot((_memory("gone", "2026-01-01"), _memory("kept")), (), 1),)
    looked: list[int] = []
    real = validity.expired

    def counting(memories: object, today: str) -> list[Memory]:
        looked.append(1)
        return real(memories, today)  # type: ignore[arg-type]

    monkeypatch.setattr(validity, "expired", counting)
    assert validity.expired_ids(old, "2026-06-01") == {"gone"}
    taken = validity.expired_ids(old, "2026-06-01")
    assert taken == {"gone"} and len(looked) == 1
    taken.add("changed by a caller")
    assert validity.expired_ids(old, "2026-06-01") == {"gone"}
    assert validity.expired_ids(old, "2025-06-01") == set() and len(looked) == 2
    new = (Snapshot((_memory("gone", "2026-01-01"), _memory("later", "2026-03-01")), (), 2),)
    assert validity.expired_ids(new, "2026-06-01") == {"gone", "later"} and len(looked) == 3
    assert validity.expired_ids(iter(new), "2026-06-01") == {"gone", "later"} and len(looked) == 4


def test_in_force_keeps_exactly_what_current_keeps() -> None:
    """The store's start filters every memory with `in_force`, `current` written out: the two agree."""
    from store.code.validity import current, in_force
    from store.files.memory import Memory

    memories = [
        Memory(f"{tier}-{n}", "project", tier, "h", type="fact", title="t", valid_until=until)
        for n, until in enumerate(
            ["", "2026-03-01", "2026-03-02T10:00:00Z", "2026-02-28", "2026-03-01T23:59:59Z"]
        )
        for tier in ("durable", "working")
    ]
    durable, notes = in_force(memories, "2026-03-01")
    assert sorted([*durable, *notes]) == sorted(m.id for m in memories if current(m, "2026-03-01"))
