"""`/duplicates`: pairs of memories that say nearly the same thing, each with its way out: a merge
proposal (`POST /duplicates/merge`), or retiring the one whose every word the other holds.

The pairs (store.write.near_duplicates) are found off the request path, once per view of the
store: on a store of 10,000 memories the search takes seconds, and no page waits for it. Until it
is done the page says so and reloads itself (a `<meta http-equiv="refresh">`: the page runs no
script). A launch starts looking at once (engram_mcp.ui.serve), and so does the pairs page when
the store changed; the list's and a memory page's near-duplicate marks appear once it is done.

The merge is proposed, not written: it goes through the proposal path (verdict, diff) and waits
on the pending page for the person's Save, like every other proposal (origin `ui:merge`).
"""

from __future__ import annotations

import logging
import threading
from typing import Final

from werkzeug.wrappers import Request, Response

from engram_mcp.cli.common import cli_wording
from engram_mcp.ui.memory_view import lookup
from engram_mcp.ui.webapp import Page
from store.code.staleness import key
from store.errors import StoreError
from store.files.memory import Memory
from store.store import Store
from store.write import proposals
from store.write.near_duplicates import Pair, merge_candidate, near_duplicates

log = logging.getLogger("engram.ui")

ORIGIN: Final = "ui:merge"
RELOAD_SECONDS: Final = 2


class PairFinder:
    """The pairs of the store's current view, found in a thread of their own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._found: tuple[tuple[object, ...], list[Pair]] | None = None
        self._running: tuple[object, ...] | None = None

    def pairs(self, store: Store) -> tuple[list[Pair] | None, bool]:
        """(the pairs last found or None, whether they are the current view's); starts a search
        when they are not."""
        view = store.view()
        with self._lock:
            if self._found is not None and self._found[0] == view.key:
                return self._found[1], True
            if self._running != view.key:
                self._running = view.key
                config = store.config()
                memories = list(view.durable.values())
                threading.Thread(
                    target=self._find,
                    args=(view.key, memories, config.dedup_related, config.dedup_duplicate),
                    name="engram-ui-pairs",
                    daemon=True,
                ).start()
            return (self._found[1] if self._found is not None else None), False

    def marked(self, store: Store) -> dict[str, Memory]:
        """For each memory in a pair of the current view: the other one. Nothing until the pairs
        of this view are found (a launch starts looking at once; this never starts a search, so
        the list of memories costs nothing more)."""
        with self._lock:
            found = self._found
        if found is None or found[0] != store.view().key:
            return {}
        marks: dict[str, Memory] = {}
        for pair in found[1]:
            marks.setdefault(key(pair.keeper), pair.other)
            marks.setdefault(key(pair.other), pair.keeper)
        return marks

    def _find(
        self, view_key: tuple[object, ...], memories: list[Memory], related: float, duplicate: float
    ) -> None:
        try:
            found = near_duplicates(memories, related=related, duplicate=duplicate)
        except Exception:  # a file gone meanwhile, or a bug: said, and the page shows none
            log.exception("engram ui: looking for near-duplicate pairs failed")
            found = []
        with self._lock:
            if self._running == view_key:
                self._found = (view_key, found)
                self._running = None


def finder(page: Page) -> PairFinder:
    found = page.extra.get("pairs")
    if not isinstance(found, PairFinder):
        found = page.extra["pairs"] = PairFinder()
    return found


def duplicates(page: Page, request: Request) -> Response:
    pairs, current = finder(page).pairs(page.store)
    return page.render(
        "duplicates.html",
        pairs=pairs or [],
        looking=pairs is None or not current,
        reload=RELOAD_SECONDS if pairs is None or not current else None,
        key=key,
        counted=len(page.store.view().durable),
    )


def merge(page: Page, request: Request) -> Response:
    """Propose the merge of one pair the page listed (the two memories named by their keys)."""
    try:
        first, second = (
            lookup(page.store, request.form.get("keeper", "")),
            lookup(page.store, request.form.get("other", "")),
        )
    except StoreError as exc:
        return page.problem(404 if exc.code == "ENGRAM_NOT_FOUND" else 400, exc.code, exc.text(cli_wording))
    pairs, _ = finder(page).pairs(page.store)
    pair = next((p for p in pairs or [] if _same(p.keeper, first) and _same(p.other, second)), None)
    if pair is None:
        return page.problem(
            409,
            "ENGRAM_VALIDATION",
            "these two are not a near-duplicate pair of the store as it is now: open the pairs page "
            "again and merge from there",
        )
    try:
        entries, redactions = proposals.draft(page.store, [merge_candidate(pair)])
        preview = proposals.store_proposal(page.store, entries, redactions, ORIGIN)
    except StoreError as exc:
        return page.problem(409, exc.code, exc.text(cli_wording))
    verdict = preview.candidates[0].verdict
    text = (
        f"Proposed merging {second.id} into {first.id} (verdict {verdict.kind}): review it on the "
        f"pending page and save it there. Once it is saved, {first.id} says all {second.id} says: "
        f"retire {second.id} from its page."
    )
    return page.render("done.html", text=text, back="/pending", back_text="Review it on the pending page")


def _same(listed: Memory, now: Memory) -> bool:
    """The memory the pairs page listed is this one, unchanged since."""
    return (listed.scope, listed.id, listed.hash) == (now.scope, now.id, now.hash)
