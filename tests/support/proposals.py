"""Proposals made straight on the store, for the write-path suites: a fixed clock, a candidate
unrelated to the fixture memories, and `propose` (draft, then store the pending record)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from store.store import Store
from store.write import proposals

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC).timestamp()
TITLE = "Frobnicate the quux widgets nightly"
BODY = (
    "The zorblax scheduler frobnicates every quux widget at 02:00; skipping a night "
    "leaves the wobbegong cache half warm and the morning dashboard shows stale glimmers."
)


def fixed(moment: float = NOW) -> Callable[[], float]:
    """A clock for `Store(clock=...)` that always reads `moment`."""
    return lambda: moment


def candidate(title: str = TITLE, body: str = BODY, **extra: Any) -> dict[str, Any]:
    """A `fact` candidate (the fields `engram_save` takes), with `extra` fields added."""
    return {"type": "fact", "title": title, "body": body, **extra}


def propose(store: Store, raw: list[dict[str, Any]], status: str = "pending") -> proposals.Preview:
    """Draft `raw` and store it as a `save` proposal with `status`; its preview (and token)."""
    entries, redactions = proposals.draft(store, raw)
    return proposals.store_proposal(store, entries, redactions, "save", status=status)
