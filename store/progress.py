"""Progress of a long index build, on the `engram.progress` logger (the server shows it on
stderr). Nothing is said for a build that ends within `after` seconds."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

log = logging.getLogger("engram.progress")

_CHECK_EVERY: Final = 256
"""Steps between two looks at the clock."""


_build_began: float | None = None
"""When the build under way began (`one_build`): each step's progress counts from it."""


@contextmanager
def one_build(clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Steps taken inside count as one build: a store whose listing and search index each take
    under a second, but a second and more together, still says how it goes."""
    global _build_began
    outer = _build_began is not None
    if not outer:
        _build_began = clock()
    try:
        yield
    finally:
        if not outer:
            _build_began = None


class Progress:
    def __init__(
        self,
        what: str,
        total: int,
        *,
        after: float = 1.0,
        every: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what, self.total, self._every, self._clock = what, total, every, clock
        self._began = clock()
        self._next = (self._began if _build_began is None else min(self._began, _build_began)) + after
        self._said = False

    def step(self, done: int) -> None:
        """`done` of `total` items are through; says so once a second after the first `after`."""
        if done % _CHECK_EVERY or (now := self._clock()) < self._next:
            return
        self._next = now + self._every
        self._said = True
        log.info("%s: %s of %s", self.what, f"{done:,}", f"{self.total:,}")

    def finish(self) -> None:
        if self._said:
            log.info("%s: %s done in %.1f s", self.what, f"{self.total:,}", self._clock() - self._began)
