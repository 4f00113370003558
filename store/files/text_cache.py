"""What a memory file holds beyond its record (its front matter and its body), kept in memory
for a while so a read does not go back to the disk for it.

Two parts, under one lock (a server reads from several threads):
- an LRU of the last `limit` texts asked for;
- the bodies just parsed and not read yet. A fresh build parses every file and then tokenises
  every body: with the LRU alone, all but the last `limit` were read from disk a second time.
  A held body leaves at its first read (into the LRU), so a build holds them only between parse
  and index; past `unread_limit` characters the oldest go first, and once parsing has been quiet
  for `quiet` seconds the bodies nobody asked for are dropped at the next read that finds none
  held (their memory's index entry was already current), so steady memory stays as it was.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

Key = tuple[str, str]
"""A file's path and the content hash of what it held."""


class TextCache:
    def __init__(
        self,
        *,
        limit: int = 2048,
        unread_limit: int = 16 * 1024 * 1024,
        quiet: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.unread_limit, self.quiet, self._clock = limit, unread_limit, quiet, clock
        self._lock = threading.Lock()
        self._recent: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
        self.unread: OrderedDict[Key, str] = OrderedDict()  # the oldest leave first, in O(1)
        self.unread_chars = 0
        self._last_hold = 0.0

    def recall(self, key: tuple[str, str, str]) -> Any:
        with self._lock:
            found = self._recent.get(key)
            if found is not None:
                self._recent.move_to_end(key)
            return found

    def remember(self, key: tuple[str, str, str], value: Any) -> None:
        with self._lock:
            self._remember(key, value)

    def hold(self, key: Key, body: str) -> None:
        """A body just parsed, until its first read."""
        with self._lock:
            if key in self.unread:
                return
            self.unread[key] = body
            self.unread_chars += len(body)
            self._last_hold = self._clock()
            while self.unread_chars > self.unread_limit:
                self.unread_chars -= len(self.unread.popitem(last=False)[1])

    def take(self, key: Key) -> str | None:
        """A held body, moved into the LRU; None when none is held."""
        with self._lock:
            found = self.unread.pop(key, None)
            if found is not None:
                self.unread_chars -= len(found)
                self._remember((*key, "body"), found)
            elif self.unread and self._clock() - self._last_hold > self.quiet:
                self.unread.clear()
                self.unread_chars = 0
            return found

    def clear(self) -> None:
        with self._lock:
            self._recent.clear()
            self.unread.clear()
            self.unread_chars = 0

    def _remember(self, key: tuple[str, str, str], value: Any) -> None:
        self._recent[key] = value
        self._recent.move_to_end(key)
        while len(self._recent) > self.limit:
            self._recent.popitem(last=False)


TEXTS: Final = TextCache()
"""The one cache of this process (store.files.memory reads through it)."""
