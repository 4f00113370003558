"""Valid time (SPEC §2): `valid_until` and `review_after` on durable memories.

* `valid_until: YYYY-MM-DD` — the memory is valid through that day. After it, every read
  leaves it out (search, route, load, status counts, lookups by id), the file stays on disk,
  and `engram stale --expired` lists it. Its id stays taken: a new proposal never reuses it.
  A working note's `valid_until` works the same way (a note without one has expired).
* `review_after: YYYY-MM-DD` — from that day on the memory is flagged `review` (still loaded).

Dates are compared as ISO strings on their first ten characters, against engram's clock
(`ENGRAM_NOW` in tests), in UTC.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from typing import Any, Final

from store.files.memory import Memory

DATE_PATTERN: Final = r"^\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$(?!\n)"
_DATE: Final = re.compile(DATE_PATTERN)


def is_date(value: object) -> bool:
    """A `YYYY-MM-DD` calendar date (a time of day after it is allowed and ignored):
    `2026-13-01` and `2026-02-30` are not dates."""
    if not isinstance(value, str) or _DATE.fullmatch(value) is None:
        return False
    try:
        date.fromisoformat(value[:10])
    except ValueError:
        return False
    return True


def current(memory: Memory, today: str) -> bool:
    """Still valid today: a note through its valid_until day (none: expired); a durable
    memory without valid_until always, with one through that day."""
    if memory.tier == "working":
        return memory.valid_until[:10] >= today
    return not memory.valid_until or memory.valid_until[:10] >= today


def in_force(memories: Iterable[Memory], today: str) -> tuple[dict[str, Memory], dict[str, Memory]]:
    """(durable memories, notes) by id that are `current` today: its test written out, as it
    runs for every memory of a store when a process starts."""
    durable: dict[str, Memory] = {}
    notes: dict[str, Memory] = {}
    for m in memories:
        if m.tier == "durable":
            if not m.valid_until or m.valid_until[:10] >= today:
                durable[m.id] = m
        elif m.valid_until[:10] >= today:
            notes[m.id] = m
    return durable, notes


def expired(memories: Iterable[Memory], today: str) -> list[Memory]:
    """The durable memories whose valid_until has passed, by id."""
    return sorted(
        (m for m in memories if m.tier == "durable" and not current(m, today)), key=lambda m: (m.id, m.scope)
    )


_last_expired: tuple[tuple[Any, ...], str, frozenset[str]] | None = None
"""The snapshots last asked about (the view's own tuple), the day, and their expired ids."""


def expired_ids(snapshots: Iterable[Any], today: str) -> set[str]:
    """The ids of expired durable memories in catalog snapshots (they stay taken).

    Every proposal and every commit asks with the view's snapshots: while the view is the same
    (its tuple, unchanged snapshots of immutable memories) and so is the day, the answer is
    too, and is not recomputed over every memory."""
    global _last_expired
    asked = snapshots if isinstance(snapshots, tuple) else tuple(snapshots)
    held = _last_expired
    if held is not None and held[0] is asked and held[1] == today:
        return set(held[2])
    found = {m.id for m in expired((m for s in asked for m in s.memories), today)}
    _last_expired = (asked, today, frozenset(found))
    return found


def review_due(review_after: str, today: str) -> str:
    """Why a durable memory with this `review_after` is due for review today ("" if not)."""
    if review_after and is_date(review_after) and review_after[:10] <= today:
        return f"review after {review_after[:10]} has passed"
    return ""
