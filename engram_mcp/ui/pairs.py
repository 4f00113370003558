"""The near-duplicate pairs of the store, found off the request path.

The search (store.propose.near_duplicates) takes seconds on 10,000 memories and holds the GIL
meanwhile, so it runs in a thread of its own, once per view of the store, and no page waits for
it. A launch starts it a second after its first page is served (engram_mcp.ui.serve), the pairs
page whenever the store changed; the list's and a memory page's marks appear once it is done.
Where the vector signal is on, the pairs by meaning come from the vector matrix
(store.propose.near_duplicates.meaning_neighbours); pairs found while its model was still loading or its vectors
building are shown, and looked for again at a later visit (`RETRY_SECONDS`).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Final

from engram_mcp.ui.webapp import Page
from store.code.staleness import key
from store.files.memory import Memory
from store.propose.near_duplicates import NEIGHBOURS, Meaning, Pair, meaning_neighbours, near_duplicates
from store.read.view import View
from store.store import Store

log = logging.getLogger("engram.ui")


class PairFinder:
    """The pairs of the store's current view, found in a thread of their own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._found: tuple[tuple[object, ...], list[Pair]] | None = None
        self._running: tuple[object, ...] | None = None
        self._partial_at: float | None = None
        """When the pairs last found were found without the vector signal it was getting ready
        (its model loading, its vectors building); None when they were found with everything."""

    def pairs(self, store: Store) -> tuple[list[Pair] | None, bool]:
        """(the pairs last found or None, whether they are the current view's); starts a search
        when they are not, or when they were found before the vector signal was ready."""
        view = store.view()
        with self._lock:
            if self._found is not None and self._found[0] == view.key:
                partial = self._partial_at
                if (
                    partial is not None
                    and self._running is None
                    and time.monotonic() - partial >= RETRY_SECONDS
                ):
                    self._start(store, view)  # these are shown meanwhile
                return self._found[1], True
            if self._running != view.key:
                self._start(store, view)
            return (self._found[1] if self._found is not None else None), False

    def _start(self, store: Store, view: View) -> None:
        self._running = view.key
        config = store.config()
        threading.Thread(
            target=self._find,
            args=(store, view, config.dedup_related, config.dedup_duplicate),
            name="engram-ui-pairs",
            daemon=True,
        ).start()

    def marked(self, store: Store) -> dict[str, Memory]:
        """For each memory in a pair of the current view: the other one. Nothing until the pairs
        of this view are found (a launch starts looking after its first page; this never starts
        a search, so the list of memories costs nothing more)."""
        with self._lock:
            found = self._found
        if found is None or found[0] != store.view().key:
            return {}
        marks: dict[str, Memory] = {}
        for pair in found[1]:
            marks.setdefault(key(pair.keeper), pair.other)
            marks.setdefault(key(pair.other), pair.keeper)
        return marks

    def _find(self, store: Store, view: View, related: float, duplicate: float) -> None:
        meaning, partial = _meaning(store, view)
        try:
            found = near_duplicates(
                list(view.durable.values()), related=related, duplicate=duplicate, meaning=meaning
            )
        except Exception:  # a file gone meanwhile, or a bug: said, and the page shows none
            log.exception("engram ui: looking for near-duplicate pairs failed")
            found = []
        with self._lock:
            if self._running == view.key:
                self._found = (view.key, found)
                self._partial_at = time.monotonic() if partial else None
                self._running = None


def _meaning(store: Store, view: View) -> tuple[Meaning | None, bool]:
    """Each memory's nearest by meaning, and whether the vector signal was still getting ready
    (then the pairs are looked for again later)."""
    try:
        meaning = meaning_neighbours(store, view, top=NEIGHBOURS)
        return meaning, meaning is None and store.finder.vector_state()["state"] in ("loading", "building")
    except Exception:  # a model that fails: the pairs by words are still shown
        log.exception("engram ui: looking for near-duplicate pairs by meaning failed")
        return None, False


RETRY_SECONDS: Final = 30.0
"""How long pairs found before the vector signal was ready are shown before a visit to the
pairs page looks again (a search of a large store holds the GIL for seconds)."""
AFTER_FIRST_PAGE: Final = "pairs after the first page"
DELAY_SECONDS: Final = 1.0
"""After the first page is served, before the pairs are looked for: the search holds the GIL
for seconds on a large store, and the first page should not wait behind it."""


def look_after_first_page(page: Page) -> None:
    """A launch's wish: look for the pairs once the first page has been served (`started`)."""
    page.extra[AFTER_FIRST_PAGE] = True


def started(page: Page) -> None:
    """Called when a page has been made: the first time after a launch, start looking."""
    if page.extra.pop(AFTER_FIRST_PAGE, False):
        timer = threading.Timer(DELAY_SECONDS, finder(page).pairs, args=(page.store,))
        timer.daemon = True
        timer.start()


def finder(page: Page) -> PairFinder:
    found = page.extra.get("pairs")
    if not isinstance(found, PairFinder):
        found = page.extra["pairs"] = PairFinder()
    return found
