"""A fresh store's BM25 index in one pass (store.search.lexical, when the index is empty): the
index `bm25.InvertedIndex.add` would give one document at a time, posting for posting."""

from __future__ import annotations

import itertools
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable
from typing import Final

import orjson

from store.search.bm25 import _MAGIC, InvertedIndex, _key_header, load, load_kernels

BULK_DOCUMENTS: Final = 2000
"""Documents from which `build` lays the postings out with the numpy kernels (one sort instead
of an append per posting: ~2.3 million of them at 10,000 memories)."""


class _Vocabulary(dict[str, int]):
    """Term → id, a new term numbered as it is first met (a lookup of a known term stays in C)."""

    def __missing__(self, term: str) -> int:
        number = self[term] = len(self)
        return number


def build(documents: Iterable[tuple[Hashable, Iterable[str] | dict[str, int], str]]) -> InvertedIndex:
    """A new index of these (key, tokens, tag) documents, keys distinct: the index `add` one
    at a time would give, posting for posting, made in one pass (a fresh store's first search)."""
    documents = list(documents)
    if len(documents) < BULK_DOCUMENTS:
        index = InvertedIndex()
        for key, tokens, tag in documents:
            index.add(key, tokens, tag)
        return index
    term_id = _Vocabulary()
    slots, tids, tfs, doc_len = array("I"), array("I"), array("I"), array("I")
    held: list[int] = []
    number = term_id.__getitem__
    for slot, (_, tokens, _) in enumerate(documents):
        counts = tokens if isinstance(tokens, dict) else Counter(tokens)
        ids = list(map(number, counts))  # ids in first-seen order
        tids.extend(ids)
        tfs.extend(counts.values())
        slots.extend(itertools.repeat(slot, len(ids)))
        doc_len.append(sum(counts.values()))
        held.append(len(ids))
    post, docs_bytes, tfs_bytes, df = load_kernels().layout(slots, tids, tfs, len(term_id))
    header = {
        **_key_header([key for key, _, _ in documents]),
        "tags": [tag for _, _, tag in documents],
        "vocab": list(term_id),
        "post": post,
        "terms": held,
        "free": [],
    }
    head = orjson.dumps(header)
    parts = [_MAGIC, len(head).to_bytes(8, "little"), head, doc_len.tobytes(), df, docs_bytes, tfs_bytes]
    return load(b"".join([*parts, tids.tobytes()]))
