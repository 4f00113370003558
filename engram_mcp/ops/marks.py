"""Staleness and review marks on read results (store.code.staleness), for the read operations.

A mark is reported only where there is one: a result without marks looks as it always did.
Text: `— stale: store/search/bm25.py renamed or deleted` after the line; structured data: `marks`,
a list of `{kind, reason}` on a search or route entry, and `marks` by id in load.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from store.code.staleness import Mark, describe, key, marks_data
from store.files.memory import Memory
from store.finder import SearchEntry
from store.store import Store


def of_entries(store: Store, entries: Sequence[SearchEntry]) -> list[tuple[Mark, ...]]:
    """The marks of each search entry (the visible memory with that id, scope and tier)."""
    view = store.view(recent_ok=True)  # the search has just looked
    memories: list[Memory | None] = []
    for entry in entries:
        table = view.notes if entry.type == "note" else view.durable
        found = table.get(entry.id)
        memories.append(found if found is not None and found.scope == entry.scope else None)
    marks = store.marks(m for m in memories if m is not None)
    return [marks.get(key(m), ()) if m is not None else () for m in memories]


def annotate(row: dict[str, Any], marks: Sequence[Mark]) -> str:
    """Add `marks` to a result row; the text to append to its line ("" when unmarked)."""
    if not marks:
        return ""
    row["marks"] = marks_data(marks)
    return f" — {describe(marks)}"
