"""What the list of memories shows: rows, filters, the search, and each row's marks.

Filters are GET query parameters (`type`, repeatable; `scope`; `status`; `tag`; `q`, the search;
`page`), so a filtered list is a link. The search is engram's own ranking (`Store.find`, what
`engram search` runs). Marks are computed for the rows shown only (store.code.staleness, what
`engram stale` uses; `expired` from valid_until; `never fetched` from the usage counts), so a
store of 10,000 memories lists its first page as fast as a small one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from store.code.staleness import Mark, key
from store.code.validity import current
from store.files.memory import DURABLE_TYPES, STATUSES, Memory
from store.store import Store

PAGE_SIZE: Final = 100
SEARCH_LIMIT: Final = 50
STATUS_CHOICES: Final = (*STATUSES, "expired", "all")
SCOPE_CHOICES: Final = ("project", "user")
TYPE_CHOICES: Final = (*DURABLE_TYPES, "note")
MAX_QUERY: Final = 500
"""Characters of a search the page runs (the search box's own limit)."""


@dataclass(frozen=True, slots=True)
class Filters:
    """The list's query parameters, each checked against its choices (anything else is ignored)."""

    types: tuple[str, ...] = ()
    scope: str = ""
    status: str = "active"
    tag: str = ""
    query: str = ""
    page: int = 1

    @classmethod
    def of(cls, args: Mapping[str, str], types: Sequence[str]) -> Filters:
        page = args.get("page", "1")
        return cls(
            tuple(t for t in dict.fromkeys(types) if t in TYPE_CHOICES),
            args.get("scope", "") if args.get("scope", "") in SCOPE_CHOICES else "",
            args.get("status", "active") if args.get("status", "active") in STATUS_CHOICES else "active",
            args.get("tag", "")[:100],
            args.get("q", "").strip()[:MAX_QUERY],
            int(page) if page.isascii() and page.isdigit() and len(page) <= 5 and int(page) > 0 else 1,
        )

    def wanted(self, memory: Memory, today: str) -> bool:
        expired = memory.tier == "durable" and not current(memory, today)
        if self.status == "expired":
            status_ok = expired
        else:
            status_ok = self.status == "all" or (memory.status == self.status and not expired)
        return (
            status_ok
            and (not self.types or memory.type in self.types)
            and (not self.scope or memory.scope == self.scope)
            and (not self.tag or self.tag in memory.tags)
        )


@dataclass(frozen=True, slots=True)
class Row:
    memory: Memory
    key: str
    """How the page names it (`id`, `user:id`, `note:id`): its address is /memory/<key>."""
    marks: tuple[Mark, ...] = ()
    expired: bool = False
    fetched: int = 0
    score: float | None = None
    snippet: str = ""


@dataclass(frozen=True, slots=True)
class Listing:
    rows: list[Row]
    total: int
    """Memories matching the filters (a search: the hits shown)."""
    pages: int
    backends: tuple[str, ...] = ()
    tags: list[str] = field(default_factory=list)


def _candidates(store: Store) -> list[Memory]:
    """Every durable memory of both scopes (the project's shadowing the user's of the same id,
    expired ones included) and every live working note."""
    view = store.view()
    seen = {(m.scope, m.id) for m in view.durable.values()}
    expired = [
        m
        for s in view.snapshots
        for m in s.memories
        if m.tier == "durable" and (m.scope, m.id) not in seen and view.durable.get(m.id) is None
    ]
    return [*view.durable.values(), *expired, *view.notes.values()]


def listing(store: Store, filters: Filters) -> Listing:
    """The rows of one page of the list, or the hits of the search, with their marks."""
    today = store.view().key[-1]
    everything = _candidates(store)
    tags = sorted({t for m in everything for t in m.tags})[:500]
    if filters.query:
        found = store.find(
            filters.query,
            limit=SEARCH_LIMIT,
            types=[t for t in filters.types if t != "note"] if filters.types else (),
            scope=filters.scope or None,
            include_superseded=filters.status in ("superseded", "all"),
        )
        view = store.view(recent_ok=True)
        hits = []
        for entry in found.entries:
            table = view.notes if entry.type == "note" else view.durable
            memory = table.get(entry.id)
            if memory is not None and memory.scope == entry.scope and filters.wanted(memory, today):
                hits.append((memory, entry.score, entry.snippet))
        rows = _rows(store, [m for m, _, _ in hits], today, {id(m): (s, t) for m, s, t in hits})
        return Listing(rows, len(rows), 1, found.backends, tags)
    chosen = sorted(
        (m for m in everything if filters.wanted(m, today)), key=lambda m: (m.tier, m.scope, m.id)
    )
    pages = max(1, -(-len(chosen) // PAGE_SIZE))
    page = min(filters.page, pages)
    shown = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    return Listing(_rows(store, shown, today, {}), len(chosen), pages, (), tags)


def _rows(
    store: Store, memories: list[Memory], today: str, scored: Mapping[int, tuple[float, str]]
) -> list[Row]:
    marks = store.marks(memories)
    counts = store.usage.counts()
    rows = []
    for memory in memories:
        score, snippet = scored.get(id(memory), (None, ""))
        rows.append(
            Row(
                memory,
                key(memory),
                marks.get(key(memory), ()),
                memory.tier == "durable" and not current(memory, today),
                counts.get(memory.id, 0),
                score,
                snippet,
            )
        )
    return rows
