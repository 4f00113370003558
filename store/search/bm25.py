"""BM25 over an inverted index that is updated one document at a time (SPEC §3.1).

The term weight is BM25Okapi's, idf × tf·(k1 + 1) / (tf + k1·(1 − b + b·dl/avgdl)) with
k1 = 1.5 and b = 0.75, and the idf is Lucene's, log(1 + (N − n + 0.5) / (n + 0.5)): positive
for every term, so a document that shares a query term always scores above zero, whatever the
corpus size. (BM25Okapi's log((N − n + 0.5) / (n + 0.5)) is zero or negative for a term in half
the documents or more, which made a one- or two-memory store find nothing.) Scores equal a
rank-bm25 `BM25` subclass with the same idf (the test oracle), but a query touches only the
postings of its terms and adding or removing one document costs only that document's terms.
Postings are compact arrays; numpy does the arithmetic, except for a query whose postings are
few (see `_plain`), scored in plain Python the same way, bit for bit.
"""

from __future__ import annotations

import itertools
import math
import sys
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Hashable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import orjson

from store.errors import CorruptIndex
from store.errors import Untrusted as Untrusted  # what load_tagged raises
from store.files import sealed

K1: Final = 1.5
B: Final = 0.75
SMALL_POSTINGS: Final = 1024
"""Queries touching at most this many postings are scored without numpy (see `_plain`)."""
UNLOADED_POSTINGS: Final = 65536
"""…and up to this many while the numpy kernels are not loaded yet (plain Python
scores that many faster than numpy can be imported): a 10,000-memory server's
first search and the session hook never wait for it (the server's warm-up loads it after), and
longer texts (a verdict's candidate, a 100,000-memory store's queries) load it once."""
PLAIN_FIRST: Final = 4
"""How many mid-size queries (over SMALL_POSTINGS) a process answers in plain Python before it
loads the kernels: enough for a first search, or the session hook's route and load, never to
wait for numpy; a process that goes on asking (a server, a run of proposals, whose verdicts
each search for similar memories) then pays the import once rather than plain Python at every query."""
_arrays: ModuleType | None = None
"""The numpy kernels (store.search.bm25_arrays), once a query has loaded them."""
_plain_left = PLAIN_FIRST


def _plain(postings: int) -> bool:
    """Whether a query touching this many postings is worked out in plain Python: by its size,
    whether the numpy kernels are loaded already (then mid-size queries use them too), and how
    many mid-size queries this process answered without them (PLAIN_FIRST)."""
    global _plain_left
    if postings <= SMALL_POSTINGS:
        return True
    if _arrays is not None or postings > UNLOADED_POSTINGS or _plain_left <= 0:
        return False
    _plain_left -= 1  # a race between threads costs at most one plain query more
    return True


def load_kernels() -> ModuleType:
    """The numpy kernels, loaded on the first query that needs them."""
    global _arrays
    if _arrays is None:
        from store.search import bm25_arrays  # seam: numpy, for queries touching many postings

        _arrays = bm25_arrays
    return _arrays


def _idf(documents: int, holding: int) -> float:
    """Lucene's idf of a term that `holding` of `documents` documents hold."""
    return math.log(1.0 + (documents - holding + 0.5) / (holding + 0.5))


class InvertedIndex:
    def __init__(self) -> None:
        self._slot: dict[Hashable, int] = {}
        self._keys: list[Hashable | None] = []
        self._free: list[int] = []
        self._doc_len = array("I")
        self._doc_terms: list[array[int] | None] = []
        self._term_id: dict[str, int] = {}
        self._df = array("I")
        self._post_docs: list[array[int]] = []
        self._post_tfs: list[array[int]] = []
        self._total_len = 0
        self._tags: dict[Hashable, str] = {}
        self._blob: _Blob | None = None

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._slot

    def tag(self, key: Hashable) -> str | None:
        """The tag (content hash) the document was indexed with."""
        return self._tags.get(key)

    def adopt_tags(self, tags: dict[Hashable, str]) -> bool:
        """Take the caller's table of tags when it equals the index's (one comparison, and
        the strings are then shared, not held twice); False when any differs."""
        if tags != self._tags:
            return False
        self._tags = tags
        return True

    def share_tag(self, key: Hashable, tag: str) -> None:
        """Hold the caller's equal string instead of a copy (saves memory on large stores)."""
        if self._tags.get(key) == tag:
            self._tags[key] = tag

    def documents(self) -> list[Hashable]:
        return list(self._slot)

    def add(self, key: Hashable, tokens: Iterable[str] | dict[str, int], tag: str = "") -> None:
        """Index a document (replacing any document under the same key): its tokens, or how
        often each occurs (a dict in the tokens' first-seen order, as Counter gives)."""
        if key in self._slot:
            self.remove(key)
        self._tags[key] = tag
        counts = tokens if isinstance(tokens, dict) else Counter(tokens)
        slot = self._free.pop() if self._free else len(self._keys)
        if slot == len(self._keys):
            self._keys.append(key)
            self._doc_len.append(0)
            self._doc_terms.append(None)
        else:
            self._keys[slot] = key
        length = sum(counts.values())
        self._doc_len[slot] = length
        self._total_len += length
        terms = array("I")
        for term, tf in counts.items():
            tid = self._term_id.get(term)
            if tid is None:
                tid = self._term_id[term] = len(self._df)
                self._df.append(0)
                self._post_docs.append(array("I"))
                self._post_tfs.append(array("I"))
            self._df[tid] += 1
            docs, tfs = self._postings(tid)
            if docs and docs[-1] > slot:  # a freed slot reused: its postings stay in slot order
                at = bisect_left(docs, slot)
                docs.insert(at, slot)
                tfs.insert(at, tf)
            else:
                docs.append(slot)
                tfs.append(tf)
            terms.append(tid)
        self._doc_terms[slot] = terms
        self._slot[key] = slot

    def remove(self, key: Hashable) -> None:
        slot = self._slot.pop(key, None)
        self._tags.pop(key, None)
        if slot is None:
            return
        terms = self._terms_of(slot)
        for tid in terms:
            docs, tfs = self._postings(tid)
            at = bisect_left(docs, slot)  # postings are in slot order (`add` keeps them so)
            if at == len(docs) or docs[at] != slot:
                raise CorruptIndex("search index postings are out of order")
            docs.pop(at)
            tfs.pop(at)
            self._df[tid] -= 1
        self._total_len -= self._doc_len[slot]
        self._doc_len[slot] = 0
        self._doc_terms[slot] = None
        self._keys[slot] = None
        self._free.append(slot)

    def _postings(self, tid: int) -> tuple[array[int], array[int]]:
        """A term's postings, taken out of the loaded file on first use."""
        docs = self._post_docs[tid]
        if docs is _PENDING:
            assert self._blob is not None
            docs, tfs = self._blob.postings(tid)
            self._post_docs[tid], self._post_tfs[tid] = docs, tfs
        return docs, self._post_tfs[tid]

    def _terms_of(self, slot: int) -> array[int]:
        terms = self._doc_terms[slot]
        if terms is _PENDING:
            assert self._blob is not None
            terms = self._doc_terms[slot] = self._blob.terms(slot)
        assert terms is not None
        return terms

    def scores(self, query: Iterable[str], top: int | None = None) -> list[tuple[Hashable, float]]:
        """(key, score) of every document sharing a query term (all positive), unsorted; with
        `top`, only the best `top` of them (and any tied with the last), so callers can order
        ties themselves. A term repeated in the query counts once per repetition."""
        n = len(self._slot)
        if n == 0:
            return []
        wanted = [(tid, self._df[tid]) for term in query if (tid := self._term_id.get(term)) is not None]
        wanted = [(tid, df) for tid, df in wanted if df]
        try:
            if _plain(sum(df for _, df in wanted)):
                return self._scores_small(wanted, top)
            postings = [(_idf(n, df), *self._postings(tid)) for tid, df in wanted]
            found = load_kernels().scores(
                postings, self._doc_len, self._total_len / n, len(self._keys), top, K1, B
            )
        except (IndexError, ZeroDivisionError) as exc:  # a slot past the documents, or lengths of 0
            raise CorruptIndex("search index postings do not add up") from exc
        keys = self._keys
        return [(keys[slot], value) for slot, value in found]

    def _scores_small(self, wanted: list[tuple[int, int]], top: int | None) -> list[tuple[Hashable, float]]:
        """`scores` when the query's postings are few (a small store, or rare words): the same
        arithmetic, term by term in the same order, without numpy."""
        n = len(self._slot)
        avgdl = self._total_len / n
        doc_len = self._doc_len
        total: dict[int, float] = {}
        for tid, df in wanted:
            idf = _idf(n, df)
            post_docs, post_tfs = self._postings(tid)
            for slot, tf in zip(post_docs, post_tfs, strict=True):
                weight = idf * (tf * (K1 + 1) / (tf + K1 * (1 - B + B * doc_len[slot] / avgdl)))
                total[slot] = total.get(slot, 0.0) + weight
        slots = sorted(total)
        if top is not None and len(slots) > top:
            kth = sorted(total.values())[len(slots) - top]
            slots = [slot for slot in slots if total[slot] >= kth]
        keys = self._keys
        return [(keys[slot], total[slot]) for slot in slots]

    def covering(self, groups: Iterable[Iterable[str]], among: Iterable[Hashable]) -> set[Hashable]:
        """The documents of `among` that hold at least one term of each group (a word or its
        stem): those that hold every word of a query. One boolean mask per group, no sorting
        (plain sets when the postings are few, as in `scores`)."""
        slots = [(key, slot) for key in among if (slot := self._slot.get(key)) is not None]
        if not slots:
            return set()
        tids = [
            [tid for term in set(group) if (tid := self._term_id.get(term)) is not None and self._df[tid]]
            for group in groups
        ]
        if _plain(sum(self._df[tid] for group in tids for tid in group)):
            held: set[int] | None = None
            for group in tids:
                docs = {slot for tid in group for slot in self._postings(tid)[0]}
                held = docs if held is None else held & docs
            return {key for key, slot in slots if held is None or slot in held}
        try:
            mask = load_kernels().covering(
                [[self._postings(tid)[0] for tid in group] for group in tids], len(self._keys)
            )
        except IndexError as exc:
            raise CorruptIndex("search index postings point past its documents") from exc
        return {key for key, slot in slots if mask[slot]}

    def coverage(self, groups: Iterable[Iterable[str]], among: Iterable[Hashable]) -> dict[Hashable, float]:
        """How much of the query's idf mass each document of `among` holds, from 0 to 1. A word
        (a group: the word and its stem) weighs the idf of its rarer term, or the largest idf
        when no document holds it (a word the store has never seen is the most telling); a
        document holds a word when it holds either term. Postings are in slot order: a lookup
        is a bisection, whatever the postings' length."""
        n = len(self._slot)
        slots = [(key, slot) for key in among if (slot := self._slot.get(key)) is not None]
        words: list[tuple[float, list[int]]] = []
        for group in groups:
            tids = [
                tid for term in set(group) if (tid := self._term_id.get(term)) is not None and self._df[tid]
            ]
            idf = _idf(n, min((self._df[tid] for tid in tids), default=0))
            words.append((idf, tids))
        mass = sum(idf for idf, _ in words)
        if not slots or mass <= 0:
            return {key: 0.0 for key, _ in slots}
        held = dict.fromkeys((key for key, _ in slots), 0.0)
        for idf, tids in words:
            postings = [self._postings(tid)[0] for tid in tids]
            for key, slot in slots:
                for docs in postings:
                    at = bisect_left(docs, slot)
                    if at < len(docs) and docs[at] == slot:
                        held[key] += idf
                        break
        return {key: value / mass for key, value in held.items()}

    def containing(self, terms: Iterable[str]) -> list[Hashable]:
        """Every document holding all of `terms`, shortest first (ties by key): the documents
        a text with these terms adds nothing to, found by intersecting postings, rarest first."""
        tids = []
        for term in set(terms):
            tid = self._term_id.get(term)
            if tid is None or self._df[tid] == 0:
                return []
            tids.append(tid)
        if not tids:
            return []
        tids.sort(key=lambda t: (self._df[t], t))
        if _plain(sum(self._df[tid] for tid in tids)):
            found = set(self._postings(tids[0])[0])
            for tid in tids[1:]:
                found.intersection_update(self._postings(tid)[0])
            common: Iterable[int] = found
        else:
            common = load_kernels().common([self._postings(tid)[0] for tid in tids])
        keys = self._keys
        try:
            slots = sorted(common, key=lambda s: (self._doc_len[s], str(keys[s])))
        except IndexError as exc:
            raise CorruptIndex("search index postings point past its documents") from exc
        return [keys[s] for s in slots]


_MAGIC: Final = b"ENGRAM-BM25-5\n"
"""Format 5: every term's postings are in slot order (so a postings list is checked by its last
slot); format 4 could hold a reused slot out of order. Documents hold search terms with stems
alongside words and words written in a case of their own also as written (store.search.tokenize.terms).
A file of another format is refused by `load`, so the caller rebuilds it from the memories."""
TAG_KIND: Final = "search.idx"


def tagged(data: bytes, key: bytes) -> bytes:
    """`dump`'s bytes sealed with the per-user key (store.files.sealed)."""
    return sealed.seal_binary(key, TAG_KIND, data)


_VERIFY_CHUNK: Final = sealed.PIECE
"""Bytes of a mapped index hashed at a time (a multiple of any page size)."""


def load_tagged(path: Path, key: bytes) -> InvertedIndex:
    """Map a saved index and check its tag once, over every byte (the cost of trusting it). A
    regular file only, never through a link; Untrusted when the tag does not check (stale for
    an earlier engram's layout), ValueError when it does not add up. Each piece hashed is let
    go from the process's memory at once (the pages stay in the system's file cache for the
    lazy postings reads that follow): a 100,000-memory index never holds its 100 MB resident."""
    return load(sealed.map_binary(path, key, TAG_KIND, piece=_VERIFY_CHUNK))


_PENDING: Final[Any] = array("I")
"""Marker: this term's postings (or document's terms) are still in the loaded file."""


class _Blob:
    """A loaded index file; postings and term lists are sliced out of it on first use."""

    def __init__(self, data: Any, start: int, post: list[int], terms: list[int]) -> None:
        self.data = memoryview(data)
        self.documents = len(terms)
        self.vocabulary = len(post)
        try:  # machine integers: a 100,000-memory index's offsets in 1 MB, not 7
            self.post_at = array("q", itertools.accumulate(post, initial=0))
            self.terms_at = array("q", itertools.accumulate(terms, initial=0))
        except OverflowError as exc:
            raise ValueError("search index sizes do not add up") from exc
        self.docs_base = start
        self.tfs_base = start + 4 * self.post_at[-1]
        self.terms_base = self.tfs_base + 4 * self.post_at[-1]
        self.end = self.terms_base + 4 * self.terms_at[-1]

    def _array(self, base: int, lo: int, hi: int) -> array[int]:
        chunk = array("I")
        chunk.frombytes(self.data[base + 4 * lo : base + 4 * hi])
        return chunk

    def postings(self, tid: int) -> tuple[array[int], array[int]]:
        lo, hi = self.post_at[tid], self.post_at[tid + 1]
        docs = self._array(self.docs_base, lo, hi)
        # in slot order (format 5), so the ends bound it; a slot past the documents in between
        # meets an IndexError where it is used, which the callers turn into CorruptIndex
        if docs and not docs[0] <= docs[-1] < self.documents:
            raise CorruptIndex("search index postings point past its documents")
        return docs, self._array(self.tfs_base, lo, hi)

    def terms(self, slot: int) -> array[int]:
        terms = self._array(self.terms_base, self.terms_at[slot], self.terms_at[slot + 1])
        if terms and max(terms) >= self.vocabulary:
            raise CorruptIndex("search index terms point past its vocabulary")
        return terms


def dump(index: InvertedIndex) -> bytes:
    """The index as bytes: a JSON header (keys, tags, vocabulary, sizes) and raw arrays."""
    vocab = [""] * len(index._term_id)
    for term, tid in index._term_id.items():
        vocab[tid] = term
    posts = [index._postings(tid) for tid in range(len(vocab))]
    terms = [index._terms_of(slot) if k is not None else array("I") for slot, k in enumerate(index._keys)]
    header = {
        **_key_header(index._keys),
        "tags": [index._tags.get(k) if k is not None else None for k in index._keys],
        "vocab": vocab,
        "post": [len(docs) for docs, _ in posts],
        "terms": [len(t) for t in terms],
        "free": index._free,
    }
    head = orjson.dumps(header)
    parts = [_MAGIC, len(head).to_bytes(8, "little"), head, index._doc_len.tobytes(), index._df.tobytes()]
    parts += [docs.tobytes() for docs, _ in posts]
    parts += [tfs.tobytes() for _, tfs in posts]
    parts += [t.tobytes() for t in terms]
    return b"".join(parts)


def _key_header(keys: list[Hashable | None]) -> dict[str, Any]:
    """The documents' keys as the header holds them: engram's (scope, tier, id) keys as three
    columns (read back by one zip, without a tuple built per key in Python), any others as a list."""
    if keys and all(key is None or (type(key) is tuple and len(key) == 3) for key in keys):
        rows = [key if key is not None else ("", "", "") for key in keys]
        return {"key_columns": [list(column) for column in zip(*rows, strict=True)]}
    return {"keys": [list(key) if isinstance(key, tuple) else key for key in keys]}


def _keys_of(header: dict[str, Any]) -> list[Hashable | None]:
    """The keys `_key_header` wrote (a free slot's is None)."""
    if "key_columns" not in header:
        return [tuple(map(sys.intern, k)) if isinstance(k, list) else k for k in header["keys"]]
    scopes, tiers, ids = header["key_columns"]
    keys: list[Hashable | None] = list(zip(map(sys.intern, scopes), map(sys.intern, tiers), ids, strict=True))
    for slot in header["free"]:
        if not (type(slot) is int and 0 <= slot < len(keys)):
            raise ValueError("search index free slots do not add up")
        keys[slot] = None
    return keys


def load(data: Any) -> InvertedIndex:
    """The inverse of `dump` (bytes or a read-only mmap, whose postings pages are then read
    only when a query needs them); ValueError for anything that does not add up."""
    if bytes(data[: len(_MAGIC)]) != _MAGIC:
        earlier = bytes(data[: len(_MAGIC) - 2]) == _MAGIC[:-2]  # stale derived data: rebuilt quietly
        raise (
            Untrusted("not an engram search index of this version", stale=True)
            if earlier
            else ValueError("not an engram search index")
        )
    at = len(_MAGIC)
    size = int.from_bytes(bytes(data[at : at + 8]), "little")
    header = orjson.loads(bytes(data[at + 8 : at + 8 + size]))
    at += 8 + size
    keys = _keys_of(header)
    vocab = header["vocab"]
    index = InvertedIndex()
    index._keys = keys
    index._doc_len.frombytes(data[at : at + 4 * len(keys)])
    at += 4 * len(keys)
    index._df.frombytes(data[at : at + 4 * len(vocab)])
    at += 4 * len(vocab)
    blob = _Blob(data, at, header["post"], header["terms"])
    if blob.end != len(data) or len(header["post"]) != len(vocab) or len(header["terms"]) != len(keys):
        raise ValueError("search index sizes do not add up")
    if len(index._doc_len) != len(keys) or len(index._df) != len(vocab):
        raise ValueError("truncated search index")
    index._blob = blob
    index._post_docs = [_PENDING] * len(vocab)
    index._post_tfs = [_PENDING] * len(vocab)
    index._free = [int(f) for f in header["free"]]
    if any(not 0 <= slot < len(keys) for slot in index._free) or len(set(index._free)) != len(index._free):
        raise ValueError("search index free slots do not add up")
    index._doc_terms = [_PENDING] * len(keys)
    for slot in index._free:
        index._doc_terms[slot] = None
    index._term_id = dict(zip(vocab, range(len(vocab)), strict=True))
    index._slot = dict(zip(keys, range(len(keys)), strict=True))
    index._tags = dict(zip(keys, header["tags"], strict=True))
    index._slot.pop(None, None)
    index._tags.pop(None, None)
    index._total_len = sum(index._doc_len)
    return index
