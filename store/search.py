"""BM25 search over title + tags + body (SPEC §3.1), kept up to date one memory at a time.

Field weights are applied by repetition: title tokens count three times, tags twice, body
once. Scores are rank-bm25's BM25Okapi, computed over an inverted index (store.bm25) that is
updated only for memories whose content hash changed, and saved next to index.json
(`search.idx`) so a new process does not re-tokenise every file. The saved index ends with an
HMAC keyed by the per-user secret (store.bm25.tagged), checked once over every byte at load: a
planted `search.idx` (which could claim any word for any memory) is discarded and rebuilt.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from store import bm25
from store.fsutil import write_atomic
from store.memory import Memory
from store.tokenize import tokenize

log = logging.getLogger("engram.store")

TITLE_WEIGHT: Final = 3
TAG_WEIGHT: Final = 2
SNIPPET_CHARS: Final = 160
_WORD: Final = re.compile(r"\S+")

Key = tuple[str, str, str]
"""(scope, tier, id)"""


@dataclass(frozen=True, slots=True)
class Hit:
    memory: Memory
    score: float


def key_of(memory: Memory) -> Key:
    return (memory.scope, memory.tier, memory.id)


def document_tokens(memory: Memory) -> list[str]:
    title = tokenize(memory.title)
    tags = tokenize(" ".join(memory.tags))
    return title * TITLE_WEIGHT + tags * TAG_WEIGHT + tokenize(memory.body)


class SearchIndex:
    """The BM25 index of every memory of both scopes, updated from the catalogs' changes."""

    def __init__(
        self,
        cache: Path | None,
        *,
        writable: bool = True,
        key: Callable[[], bytes] = lambda: b"",
        notice: Callable[[str, str], None] = lambda code, message: None,
    ) -> None:
        self._lock = threading.Lock()
        self._cache = cache
        self._writable = writable
        self._key = key
        self._notice = notice
        self._index: bm25.InvertedIndex | None = None
        self._by_key: dict[Key, Memory] = {}
        self._dirty = False

    def _ensure(self) -> bm25.InvertedIndex:
        if self._index is None:
            self._index = bm25.InvertedIndex()
            if self._cache is not None:
                try:
                    self._index = bm25.load_tagged(self._cache, self._key())
                except FileNotFoundError:
                    pass
                except bm25.Untrusted:
                    self._dirty = True
                    self._notice(
                        "ENGRAM_UNTRUSTED",
                        f".engram/{self._cache.name}: carries no valid tag of this user's engram (it may "
                        "have come with a clone); discarded and rebuilt from the memories",
                    )
                except (OSError, ValueError, KeyError, TypeError) as exc:
                    self._dirty = True
                    log.warning("search index %s unusable (%s); rebuilding", self._cache.name, exc)
        return self._index

    def _rebuild(self) -> bm25.InvertedIndex:
        """Start over from the memories when the saved index turns out not to add up."""
        log.warning("search index %s is corrupt; rebuilding from the memories", self._cache)
        index = self._index = bm25.InvertedIndex()
        for key, memory in self._by_key.items():
            index.add(key, document_tokens(memory), tag=memory.hash)
        self._dirty = True
        return index

    def warm(self) -> None:
        """Load the saved index and numpy now (a server does it while the client connects)."""
        with self._lock:
            index = self._ensure()
            index.scores(["engram"])

    def sync(self, memories: Iterable[Memory]) -> None:
        """Make the index hold exactly these memories; only changed ones are re-tokenised."""
        memories = list(memories)
        with self._lock:
            try:
                self._sync(memories)
            except bm25.CorruptIndex:
                self._index = bm25.InvertedIndex()
                self._sync(memories)

    def _sync(self, memories: list[Memory]) -> None:
        index = self._ensure()
        wanted = {key_of(m): m for m in memories}
        for key in [k for k in index.documents() if k not in wanted]:
            index.remove(key)
            self._dirty = True
        for key, memory in wanted.items():
            if index.tag(key) != memory.hash:
                index.add(key, document_tokens(memory), tag=memory.hash)
                self._dirty = True
            else:
                index.share_tag(key, memory.hash)
        self._by_key = wanted

    def update(self, changes: dict[Key, Memory | None]) -> None:
        """Apply a few changes without looking at the rest of the store."""
        with self._lock:
            try:
                self._update(changes)
            except bm25.CorruptIndex:
                self._rebuild()
                self._update(changes)

    def _update(self, changes: dict[Key, Memory | None]) -> None:
        index = self._ensure()
        for key, memory in changes.items():
            if memory is None:
                index.remove(key)
                self._by_key.pop(key, None)
            else:
                if index.tag(key) != memory.hash:
                    index.add(key, document_tokens(memory), tag=memory.hash)
                self._by_key[key] = memory
            self._dirty = True

    def search(self, query: str, top: int | None = None) -> list[Hit]:
        """Memories with a positive score (the best `top`, ties kept), best first, ties by id."""
        terms = tokenize(query)
        if not terms:
            return []
        with self._lock:
            index = self._ensure()
            try:
                scored = index.scores(terms, top)
            except bm25.CorruptIndex:
                scored = self._rebuild().scores(terms, top)
            by_key = self._by_key
            hits = [Hit(by_key[k], round(v, 4)) for k, v in scored if k in by_key]
        hits.sort(key=lambda h: (-h.score, h.memory.id, h.memory.tier, h.memory.scope))
        return hits

    def save(self) -> None:
        """Write the index next to index.json (derived data; skipped when unchanged)."""
        if self._cache is None or not self._writable or not self._dirty or not self._cache.parent.is_dir():
            return
        if not self._lock.acquire(timeout=2.0):
            return  # still being built: derived data, the next process rebuilds what it needs
        try:
            if self._index is None:
                return
            data = bm25.dump(self._index)
            self._dirty = False
            if self._cache.is_symlink():
                return  # never written through a link (writes refuse it with ENGRAM_UNSAFE_PATH)
        finally:
            self._lock.release()
        try:
            write_atomic(self._cache, bm25.tagged(data, self._key()))
        except OSError:
            self._dirty = True


def snippet(body: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """The ~`width`-character stretch of `body` that holds the most query terms."""
    text = " ".join(body.split())
    if len(text) <= width:
        return text
    terms = set(tokenize(query))
    words = [(m.start(), set(tokenize(m.group()))) for m in _WORD.finditer(text)]
    best_start, best_hits = 0, -1
    right, counts = 0, Counter[str]()
    for left in range(len(words)):
        start = words[left][0]
        while right < len(words) and words[right][0] < start + width:
            counts.update(words[right][1] & terms)
            right += 1
        hits = len(+counts)
        if hits > best_hits:
            best_start, best_hits = start, hits
        counts.subtract(words[left][1] & terms)
    piece = text[best_start : best_start + width].rstrip()
    prefix = "…" if best_start > 0 else ""
    suffix = "…" if best_start + width < len(text) else ""
    return f"{prefix}{piece}{suffix}"
