"""BM25 search over title + tags + body (SPEC §3.1), kept up to date one memory at a time.

Field weights are applied by repetition: title terms count three times, tags twice, body
once. Terms are words plus their stems (store.search.tokenize.terms), in documents and queries alike.
Scores are BM25 with Lucene's idf (store.search.bm25), computed over an inverted index that is
updated only for memories whose content hash changed, and saved next to index.json
(`search.idx`) so a new process does not re-tokenise every file. The saved index ends with an
HMAC keyed by the per-user secret (store.files.sealed), checked once over every byte at load: a
planted `search.idx` (which could claim any word for any memory) is discarded and rebuilt.
Every memory that shares a term with the query is a hit: there is no score floor.

Searching is two steps, so another signal can be fused in between: `bm25_scores` gives the
raw score of every matching memory by key, `rank` turns any such scores into hits.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

try:  # Counter's own C loop, without Counter's Python-level update around it
    from collections import _count_elements as _count  # type: ignore[attr-defined]
except ImportError:  # another Python: the same tally in Python

    def _count(mapping: dict[str, int], iterable: Iterable[str]) -> None:
        for item in iterable:
            mapping[item] = mapping.get(item, 0) + 1


from pathlib import Path
from typing import Final

from store.errors import CorruptIndex
from store.files.derived import DerivedFile
from store.files.memory import Memory
from store.progress import Progress
from store.safety import untrusted
from store.search import bm25, bm25_build
from store.search.tokenize import FUNCTION_WORDS, terms, tokenize, word_groups

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
    title = terms(memory.title)
    tags = terms(" ".join(memory.tags))
    return title * TITLE_WEIGHT + tags * TAG_WEIGHT + terms(memory.body)


def document_counts(memory: Memory) -> dict[str, int]:
    """`Counter(document_tokens(memory))`, keys in the same order, without the repeated list
    (a fresh store counts the terms of every memory)."""
    counts: dict[str, int] = {}
    get = counts.get
    for term in terms(memory.title):
        counts[term] = get(term, 0) + TITLE_WEIGHT
    for term in terms(" ".join(memory.tags)):
        counts[term] = get(term, 0) + TAG_WEIGHT
    _count(counts, terms(memory.body))
    return counts


MAX_SUCCESSION: Final = 8
"""The most `superseded_by` links search follows from a superseded memory to the one in force."""


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
        self._file = DerivedFile(cache, writable=writable, key=key, notice=notice)
        self._index: bm25.InvertedIndex | None = None
        self._by_key: dict[Key, Memory] = {}
        self._successor: dict[Key, Key] = {}
        """Superseded memory → the memory its `superseded_by` names (same scope and tier)."""
        self._heirs: dict[Key, list[Key]] | None = None
        """Active memory → the superseded memories whose matches count for it (`_heirs_of`)."""

    def _ensure(self) -> bm25.InvertedIndex:
        if self._index is None:
            self._index = self._file.load(bm25.load_tagged) or bm25.InvertedIndex()
        return self._index

    def _rebuild(self) -> bm25.InvertedIndex:
        """Start over from the memories when the saved index turns out not to add up."""
        log.warning("search index %s is corrupt; rebuilding from the memories", self._file.path)
        index = self._index = bm25.InvertedIndex()
        for key, memory in self._by_key.items():
            index.add(key, document_counts(memory), tag=memory.hash)
        self._file.dirty = True
        return index

    def warm(self) -> None:
        """Load the saved index, numpy and the stemmer now (a server does it while the client
        connects)."""
        wanted = terms("engram warming", query=True)
        with self._lock:
            index = self._ensure()
            index.scores(wanted)

    def load_kernels(self) -> None:
        """Load BM25's numpy kernels now (a large store's warm-up: its queries then use them)."""
        bm25.load_kernels()

    def sync(self, memories: Iterable[Memory]) -> None:
        """Make the index hold exactly these memories; only changed ones are re-tokenised."""
        memories = list(memories)
        with self._lock:
            try:
                self._sync(memories)
            except CorruptIndex:
                self._index = bm25.InvertedIndex()
                self._sync(memories)

    def _sync(self, memories: list[Memory]) -> None:
        index = self._ensure()
        wanted = {(m.scope, m.tier, m.id): m for m in memories}
        self._by_key = wanted
        self._successor, self._heirs = {}, None
        for held, memory in [(k, m) for k, m in wanted.items() if m.status == "superseded"]:
            self._note_successor(held, memory)
        tags: dict[Hashable, str] = {k: m.hash for k, m in wanted.items()}
        if len(index) == len(wanted) and index.adopt_tags(tags):
            return  # the saved index holds exactly these memories (a new process, nothing changed)
        for key in [k for k in index.documents() if k not in wanted]:
            index.remove(key)
            self._file.dirty = True
        progress = Progress("indexing memories for search", len(wanted))
        fresh = not len(index)
        if (
            fresh
        ):  # a fresh store: every memory at once (bm25_build.build), in key order whatever the listing's
            documents = []
            for done, (key, memory) in enumerate(sorted(wanted.items(), key=lambda item: item[0]), 1):
                progress.step(done)
                documents.append((key, document_counts(memory), memory.hash))
            index = self._index = bm25_build.build(documents)
            self._file.dirty = bool(documents)
        for done, (key, memory) in enumerate(wanted.items(), 1):
            if not fresh:
                progress.step(done)
            if index.tag(key) != memory.hash:
                index.add(key, document_counts(memory), tag=memory.hash)
                self._file.dirty = True
            else:
                index.share_tag(key, memory.hash)
        progress.finish()

    def update(self, changes: dict[Key, Memory | None]) -> None:
        """Apply a few changes without looking at the rest of the store."""
        with self._lock:
            try:
                self._update(changes)
            except CorruptIndex:
                self._rebuild()
                self._update(changes)

    def _update(self, changes: dict[Key, Memory | None]) -> None:
        index = self._ensure()
        for key, memory in changes.items():
            self._successor.pop(key, None)
            self._heirs = None
            if memory is None:
                index.remove(key)
                self._by_key.pop(key, None)
            else:
                if index.tag(key) != memory.hash:
                    index.add(key, document_counts(memory), tag=memory.hash)
                self._by_key[key] = memory
                self._note_successor(key, memory)
            self._file.dirty = True

    def _note_successor(self, key: Key, memory: Memory) -> None:
        if memory.status == "superseded" and memory.superseded_by and memory.superseded_by != memory.id:
            self._successor[key] = (key[0], key[1], memory.superseded_by)

    def _predecessors(self) -> dict[Key, list[Key]]:
        """Active memory → every superseded memory whose heir it is (rebuilt after a change)."""
        if self._heirs is None:
            self._heirs = {}
            for old in self._successor:
                heir = self._heir(old)
                if heir is not None:
                    self._heirs.setdefault(heir, []).append(old)
        return self._heirs

    def _heir(self, key: Key) -> Key | None:
        """The active memory that replaced this superseded one, following `superseded_by` (a
        chain of at most MAX_SUCCESSION links); None when there is none in the index."""
        for _ in range(MAX_SUCCESSION):
            key_ = self._successor.get(key)
            if key_ is None:
                return None
            memory = self._by_key.get(key_)
            if memory is None:
                return None
            if memory.active:
                return key_
            key = key_
        return None

    def bm25_scores(self, query: str, top: int | None = None) -> dict[Key, float]:
        """The BM25 score of every memory sharing a term with `query` (with `top`, the best
        `top` and any tied with the last), by key, unrounded and unordered."""
        wanted = terms(query, query=True)
        if not wanted:
            return {}
        with self._lock:
            index = self._ensure()
            try:
                scored = index.scores(wanted, top)
            except CorruptIndex:
                scored = self._rebuild().scores(wanted, top)
            by_key = self._by_key
            found = {k: v for k, v in scored if k in by_key}
            for key, score in [(k, v) for k, v in found.items() if k in self._successor]:
                heir = self._heir(key)  # a match of a superseded memory counts for its successor
                if heir is not None and score > found.get(heir, 0.0):
                    found[heir] = score
            return found

    def rank(self, scores: Mapping[Key, float]) -> list[Hit]:
        """Hits for scores by key (BM25's or a fusion's), best first, ties by id, tier, scope;
        keys of memories no longer indexed are skipped."""
        with self._lock:
            by_key = self._by_key
            hits = [Hit(by_key[k], round(v, 4)) for k, v in scores.items() if k in by_key]
        hits.sort(key=lambda h: (-h.score, h.memory.id, h.memory.tier, h.memory.scope))
        return hits

    def scored(self, query: str, top: int | None = None) -> list[tuple[Memory, float]]:
        """`search` unordered, as (memory, score) pairs: for callers that order by themselves."""
        scores = self.bm25_scores(query, top)
        with self._lock:
            by_key = self._by_key
            return [(by_key[k], round(v, 4)) for k, v in scores.items() if k in by_key]

    def holding_every_word(self, query: str, among: Iterable[Key]) -> set[Key]:
        """The keys of `among` whose memories hold each word of `query` (as written or as its
        stem), or whose superseded predecessor does (its match counts for them)."""
        groups = word_groups(query)
        if not groups:
            return set()
        among = list(among)
        with self._lock:
            predecessors = self._predecessors()
            heirs = {old: key for key in among for old in predecessors.get(key, ())}
            index = self._ensure()
            try:
                held = index.covering(groups, [*among, *heirs])
            except CorruptIndex:
                held = self._rebuild().covering(groups, [*among, *heirs])
            held |= {heir for old, heir in heirs.items() if old in held}
            return {key for key in among if key in held}

    def coverage(self, query: str, among: Iterable[Key]) -> dict[Key, float]:
        """The share of `query`'s idf mass each memory of `among` holds (bm25.InvertedIndex.coverage),
        a superseded predecessor's counting for its heir as its matches do. Function words
        (`how`, `do`, `we`) weigh nothing: a store that never says them would otherwise make
        them a question's rarest words."""
        groups = [g for g in word_groups(query) if g[0] not in FUNCTION_WORDS]
        among = list(among)
        if not groups:
            return dict.fromkeys(among, 0.0)
        with self._lock:
            predecessors = self._predecessors()
            heirs = {old: key for key in among for old in predecessors.get(key, ())}
            index = self._ensure()
            try:
                found = index.coverage(groups, [*among, *heirs])
            except CorruptIndex:
                found = self._rebuild().coverage(groups, [*among, *heirs])
        out = {key: float(found.get(key, 0.0)) for key in among}
        for old, heir in heirs.items():
            out[heir] = max(out[heir], float(found.get(old, 0.0)))
        return out

    def containing(self, text: str) -> list[Memory]:
        """Every memory holding all the words of `text` (memories it adds nothing to),
        shortest first, ties by key."""
        words = tokenize(text)
        with self._lock:
            index = self._ensure()
            try:
                keys = index.containing(words)
            except CorruptIndex:
                keys = self._rebuild().containing(words)
            by_key = self._by_key
            return [by_key[k] for k in keys if k in by_key]

    def search(self, query: str, top: int | None = None) -> list[Hit]:
        """Every memory sharing a term with `query` (the best `top`, ties kept), best first."""
        return self.rank(self.bm25_scores(query, top))

    def save(self) -> None:
        """Write the index next to index.json (derived data; skipped when unchanged)."""
        if not self._file.dirty or not self._file.may_write():
            return
        if not self._lock.acquire(timeout=2.0):
            return  # still being built: derived data, the next process rebuilds what it needs
        try:
            if self._index is None:
                return
            data = bm25.tagged(bm25.dump(self._index), self._file.key())
        finally:
            self._lock.release()
        self._file.write(data)


def snippet(body: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """The ~`width`-character stretch of `body` that holds the most distinct query terms (the
    first such stretch)."""
    text = " ".join(body.split())
    if len(text) <= width:
        return untrusted.line(text, 4 * width)
    wanted = frozenset(terms(query, query=True))
    heads = frozenset(head for t in wanted for head in _heads(t.lower()))
    words = [(m.start(), _hits(m.group(), wanted, heads)) for m in _WORD.finditer(text)]
    best_start, best_hits = 0, -1
    right, counts, distinct = 0, dict.fromkeys(wanted, 0), 0
    for left in range(len(words)):
        start = words[left][0]
        while right < len(words) and words[right][0] < start + width:
            for term in words[right][1]:
                counts[term] += 1
                distinct += counts[term] == 1
            right += 1
        if distinct > best_hits:
            best_start, best_hits = start, distinct
        for term in words[left][1]:
            counts[term] -= 1
            distinct -= counts[term] == 0
    piece = text[best_start : best_start + width].rstrip()
    prefix = "…" if best_start > 0 else ""
    suffix = "…" if best_start + width < len(text) else ""
    return untrusted.line(f"{prefix}{piece}{suffix}", 4 * width)  # a clone's text, on a line of its own


def _heads(term: str) -> tuple[str, ...]:
    """What a word must contain to hold `term` as a piece or as the Snowball stem of a piece: a
    stem's first two letters begin its word, except dying, lying and tying (die, lie, tie)."""
    head = term[:2]
    return (head, head[0] + "y") if head[1:] == "i" else (head,)


def _hits(word: str, wanted: frozenset[str], heads: frozenset[str]) -> frozenset[str]:
    """The query terms one word of a body holds. An ASCII word without any of the terms'
    `_heads` holds none, so most words are never stemmed."""
    if word.isascii():
        lowered = word.lower()
        if not any(head in lowered for head in heads):
            return frozenset()
    return _word_terms(word) & wanted


@lru_cache(maxsize=1 << 16)
def _word_terms(word: str) -> frozenset[str]:
    """The search terms of one whitespace-separated word (bodies share their words: cached)."""
    return frozenset(terms(word))
