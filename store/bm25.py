"""BM25Okapi over an inverted index that is updated one document at a time.

Same formula and parameters as rank-bm25's BM25Okapi (k1 = 1.5, b = 0.75, epsilon = 0.25:
a term in more than half the documents gets epsilon × the average idf), so scores equal the
reference implementation's (a test checks it), but a query touches only the postings of its
terms and adding or removing one document costs only that document's terms. Postings are
compact arrays; numpy (imported on first search) does the arithmetic.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable
from typing import Any, Final

import orjson

K1: Final = 1.5
B: Final = 0.75
EPSILON: Final = 0.25


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
        self._avg_idf: float | None = None
        self._tags: dict[Hashable, str] = {}

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._slot

    def tag(self, key: Hashable) -> str | None:
        """The tag (content hash) the document was indexed with."""
        return self._tags.get(key)

    def documents(self) -> list[Hashable]:
        return list(self._slot)

    def add(self, key: Hashable, tokens: Iterable[str], tag: str = "") -> None:
        """Index a document (replacing any document under the same key)."""
        if key in self._slot:
            self.remove(key)
        self._tags[key] = tag
        counts = Counter(tokens)
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
            self._post_docs[tid].append(slot)
            self._post_tfs[tid].append(tf)
            terms.append(tid)
        self._doc_terms[slot] = terms
        self._slot[key] = slot
        self._avg_idf = None

    def remove(self, key: Hashable) -> None:
        slot = self._slot.pop(key, None)
        self._tags.pop(key, None)
        if slot is None:
            return
        terms = self._doc_terms[slot]
        assert terms is not None
        for tid in terms:
            docs = self._post_docs[tid]
            at = docs.index(slot)
            docs.pop(at)
            self._post_tfs[tid].pop(at)
            self._df[tid] -= 1
        self._total_len -= self._doc_len[slot]
        self._doc_len[slot] = 0
        self._doc_terms[slot] = None
        self._keys[slot] = None
        self._free.append(slot)
        self._avg_idf = None

    def _average_idf(self, n: int) -> float:
        """rank-bm25's average idf: over every term seen in the corpus, negative ones included."""
        if self._avg_idf is None:
            import numpy as np

            df = np.frombuffer(self._df, dtype=np.uint32).astype(np.float64)
            df = df[df > 0]
            self._avg_idf = float(np.mean(np.log(n - df + 0.5) - np.log(df + 0.5))) if len(df) else 0.0
        return self._avg_idf

    def scores(self, query: Iterable[str]) -> list[tuple[Hashable, float]]:
        """(key, score) of every document with a positive score, unsorted."""
        n = len(self._slot)
        if n == 0:
            return []
        import numpy as np

        avgdl = self._total_len / n
        doc_len = np.frombuffer(self._doc_len, dtype=np.uint32).astype(np.float64)
        total = np.zeros(len(self._keys), dtype=np.float64)
        touched: list[Any] = []
        for term in query:
            tid = self._term_id.get(term)
            if tid is None or self._df[tid] == 0:
                continue
            df = self._df[tid]
            idf = math.log(n - df + 0.5) - math.log(df + 0.5)
            if idf < 0:
                idf = EPSILON * self._average_idf(n)
            docs = np.frombuffer(self._post_docs[tid], dtype=np.uint32)
            tfs = np.frombuffer(self._post_tfs[tid], dtype=np.uint32).astype(np.float64)
            total[docs] += idf * (tfs * (K1 + 1) / (tfs + K1 * (1 - B + B * doc_len[docs] / avgdl)))
            touched.append(docs)
        if not touched:
            return []
        candidates = np.unique(np.concatenate(touched))
        values = total[candidates]
        keep = values > 0
        keys = self._keys
        return [(keys[int(s)], float(v)) for s, v in zip(candidates[keep], values[keep], strict=True)]


_MAGIC: Final = b"ENGRAM-BM25-1\n"


def dump(index: InvertedIndex) -> bytes:
    """The index as bytes: a JSON header (keys, tags, vocabulary, sizes) and raw arrays."""
    vocab = [""] * len(index._term_id)
    for term, tid in index._term_id.items():
        vocab[tid] = term
    header = {
        "keys": [list(k) if isinstance(k, tuple) else k for k in index._keys],
        "tags": [index._tags.get(k) if k is not None else None for k in index._keys],
        "vocab": vocab,
        "post": [len(p) for p in index._post_docs],
        "terms": [0 if t is None else len(t) for t in index._doc_terms],
        "free": index._free,
    }
    head = orjson.dumps(header)
    parts = [_MAGIC, len(head).to_bytes(8, "little"), head, index._doc_len.tobytes(), index._df.tobytes()]
    parts += [p.tobytes() for p in index._post_docs]
    parts += [p.tobytes() for p in index._post_tfs]
    parts += [t.tobytes() for t in index._doc_terms if t is not None]
    return b"".join(parts)


def load(data: bytes) -> InvertedIndex:
    """The inverse of `dump`; ValueError for anything that does not add up."""
    if not data.startswith(_MAGIC):
        raise ValueError("not an engram search index")
    at = len(_MAGIC)
    size = int.from_bytes(data[at : at + 8], "little")
    header = orjson.loads(data[at + 8 : at + 8 + size])
    at += 8 + size
    view = memoryview(data)

    def take(count: int) -> array[int]:
        nonlocal at
        chunk = array("I")
        end = at + 4 * count
        if end > len(data):
            raise ValueError("truncated search index")
        chunk.frombytes(view[at:end])
        at = end
        return chunk

    keys = [tuple(k) if isinstance(k, list) else k for k in header["keys"]]
    index = InvertedIndex()
    index._keys = keys
    index._doc_len = take(len(keys))
    index._df = take(len(header["vocab"]))
    index._post_docs = [take(n) for n in header["post"]]
    index._post_tfs = [take(n) for n in header["post"]]
    index._doc_terms = [
        take(n) if k is not None else None for k, n in zip(keys, header["terms"], strict=True)
    ]
    if at != len(data) or len(header["post"]) != len(header["vocab"]):
        raise ValueError("search index sizes do not add up")
    if any(p and max(p) >= len(keys) for p in index._post_docs):
        raise ValueError("search index postings point past its documents")
    index._term_id = {term: tid for tid, term in enumerate(header["vocab"])}
    index._slot = {k: slot for slot, k in enumerate(keys) if k is not None}
    index._tags = {k: t for k, t in zip(keys, header["tags"], strict=True) if k is not None}
    index._free = [int(f) for f in header["free"]]
    index._total_len = sum(index._doc_len)
    return index
