"""`/overview`: two pictures where a person would rather look than read.

- **Memories by type and age**: a bar per type, split by how long ago each memory was last
  updated (this week, this month, this quarter, this year, older).
- **Freshness against the code they cite**: for the memories that cite code (refs), a bar per
  age band, split into those whose cited code checks out, those due for review (half a cited
  file rewritten since, or the review date passed) and those stale (a cited file, symbol or glob
  gone): store.code.staleness, what `engram stale` reports.

The pictures are SVG drawn on the server from plain rectangles and text (no script, no inline
style: the page's Content-Security-Policy allows neither), each followed by the same numbers as
a table for anyone who reads rather than looks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Final

from werkzeug.wrappers import Request, Response

from engram_mcp.ui.webapp import Page
from store.code.staleness import key
from store.files.memory import DURABLE_TYPES, Memory

AGES: Final = (
    ("this week", 7),
    ("this month", 31),
    ("this quarter", 92),
    ("this year", 366),
    ("older", None),
)
AGE_COLOURS: Final = ("#1d6b34", "#4f9a5e", "#9cc7a4", "#d8c89a", "#b9a07a")
FRESHNESS: Final = (("checks out", "#4f9a5e"), ("due for review", "#d9a520"), ("stale", "#c0472c"))
BAR_WIDTH: Final = 560
"""Pixels of the longest bar."""
ROW: Final = 26
LABEL: Final = 150


@dataclass(frozen=True, slots=True)
class Segment:
    x: float
    width: float
    colour: str
    name: str
    count: int


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    y: int
    total: int
    segments: tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class Chart:
    """A horizontal stacked bar chart, laid out: bars, its legend (name, colour) and its size."""

    bars: tuple[Bar, ...]
    legend: tuple[tuple[str, str], ...]
    width: int
    height: int
    names: tuple[str, ...]


def chart(rows: Sequence[tuple[str, Sequence[int]]], legend: Sequence[tuple[str, str]]) -> Chart:
    """Lay out one bar per (label, counts by legend entry), scaled to the largest total."""
    most = max((sum(counts) for _, counts in rows), default=0) or 1
    bars = []
    for n, (label, counts) in enumerate(rows):
        x = float(LABEL)
        segments = []
        for (name, colour), count in zip(legend, counts, strict=True):
            width = BAR_WIDTH * count / most
            if count:
                segments.append(Segment(round(x, 1), round(width, 1), colour, name, count))
            x += width
        bars.append(Bar(label, n * ROW, sum(counts), tuple(segments)))
    return Chart(
        tuple(bars), tuple(legend), LABEL + BAR_WIDTH + 60, len(rows) * ROW, tuple(n for n, _ in legend)
    )


def age_band(updated: str, today: date) -> int:
    """The index in AGES of a memory last updated at `updated` (an unknown date counts as older)."""
    try:
        then = date.fromisoformat(updated[:10])
    except ValueError:
        return len(AGES) - 1
    days = (today - then).days
    for n, (_, limit) in enumerate(AGES):
        if limit is not None and days < limit:
            return n
    return len(AGES) - 1


def by_type_and_age(memories: Sequence[Memory], today: date) -> Chart:
    counts = {t: [0] * len(AGES) for t in DURABLE_TYPES}
    for memory in memories:
        if memory.type in counts:
            counts[memory.type][age_band(memory.updated, today)] += 1
    rows = [(t, c) for t, c in counts.items() if sum(c)]
    return chart(rows, [(name, colour) for (name, _), colour in zip(AGES, AGE_COLOURS, strict=True)])


def freshness(memories: Sequence[Memory], marks: dict[str, tuple[str, ...]], today: date) -> Chart:
    """`marks`: each citing memory's mark kinds, by its key (none: its code checks out)."""
    counts = [[0] * len(FRESHNESS) for _ in AGES]
    for memory in memories:
        kinds = marks.get(key(memory), ())
        column = 2 if "stale" in kinds else 1 if "review" in kinds else 0
        counts[age_band(memory.updated, today)][column] += 1
    rows = [(f"updated {name}", c) for (name, _), c in zip(AGES, counts, strict=True) if sum(c)]
    return chart(rows, FRESHNESS)


def overview(page: Page, request: Request) -> Response:
    store = page.store
    view = store.view()
    today = date.fromisoformat(view.key[-1]) if isinstance(view.key[-1], str) else date.today()
    memories = list(view.durable.values())
    citing = [m for m in memories if m.refs and m.scope == "project"]
    marks = {k: tuple(mark.kind for mark in v) for k, v in store.marks(citing).items()}
    return page.render(
        "overview.html",
        types=by_type_and_age(memories, today),
        fresh=freshness(citing, marks, today),
        memories=len(memories),
        citing=len(citing),
    )
