"""What the CLI and the review page both report of a store: its marked and expired memories, and
whether it runs in a project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store.code.staleness import is_stale, key, marks_data
from store.code.validity import expired
from store.files.workspace import write_refusal
from store.store import Store


def stale_report(store: Store) -> dict[str, Any]:
    """Every visible memory with a mark, and every expired one (for `stale` and `doctor`)."""
    view = store.view()
    memories = sorted(view.everything(), key=lambda m: (m.tier, m.scope, m.id))
    found = store.marks(memories)
    rows = []
    for memory in memories:
        marks = found.get(key(memory))
        if marks:
            row: dict[str, Any] = {
                "id": key(memory),
                "title": memory.title,
                "type": memory.type,
                "marks": marks_data(marks),
            }
            row["stale"] = is_stale(marks)
            rows.append(row)
    today = view.key[-1]
    gone = [
        {
            "id": key(m),
            "title": m.title,
            "type": m.type,
            "valid_until": m.valid_until,
            "file": (store.project if m.scope == "project" else store.user).display(Path(m.path or m.id)),
        }
        for m in expired((m for s in view.snapshots for m in s.memories), today)
    ]
    return {
        "stale": [r for r in rows if r["stale"]],
        "review": [r for r in rows if not r["stale"]],
        "expired": gone,
    }


def in_workspace(store: Store) -> bool:
    """Whether engram runs in a project (`.engram/` or a git repository), not in any folder."""
    return write_refusal(store.workspace) is None
