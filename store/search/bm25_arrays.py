"""BM25's numpy kernels: the arithmetic of `store.search.bm25` for queries touching many postings.

Kept apart so numpy (~50–100 ms to import) is paid only by the first query that needs it:
`bm25._kernels` is the one place this module is imported. Each kernel gives what the plain
Python path of `bm25` gives, bit for bit (the same operations in the same order per document).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

import numpy as np


def scores(
    postings: list[tuple[float, array[int], array[int]]],
    doc_len: array[int],
    avgdl: float,
    slots: int,
    top: int | None,
    k1: float,
    b: float,
) -> list[tuple[int, float]]:
    """(slot, score) of every document in the postings, each given as (idf, docs, tfs); with
    `top`, only the best `top` (and any tied with the last). `k1` and `b` are bm25's."""
    lengths = np.frombuffer(doc_len, dtype=np.uint32).astype(np.float64)
    total = np.zeros(slots, dtype=np.float64)
    touched = np.zeros(slots, dtype=bool)
    for idf, post_docs, post_tfs in postings:
        docs = np.frombuffer(post_docs, dtype=np.uint32)
        tfs = np.frombuffer(post_tfs, dtype=np.uint32).astype(np.float64)
        total[docs] += idf * (tfs * (k1 + 1) / (tfs + k1 * (1 - b + b * lengths[docs] / avgdl)))
        touched[docs] = True
    candidates = np.flatnonzero(touched)
    if len(candidates) == 0:
        return []
    values = total[candidates]
    if top is not None and len(values) > top:
        kth = np.partition(values, len(values) - top)[len(values) - top]
        keep = values >= kth
        candidates, values = candidates[keep], values[keep]
    return list(zip(candidates.tolist(), values.tolist(), strict=True))


def covering(groups: list[list[array[int]]], slots: int) -> list[bool]:
    """Per slot, whether the document is in at least one postings list of every group."""
    mask_all = np.ones(slots, dtype=bool)
    for group in groups:
        mask = np.zeros(slots, dtype=bool)
        for docs in group:
            mask[np.frombuffer(docs, dtype=np.uint32)] = True
        mask_all &= mask
    held: list[bool] = mask_all.tolist()
    return held


def common(postings: Iterable[array[int]]) -> list[int]:
    """The slots in every one of the postings lists (the rarest first is fastest)."""
    lists = iter(postings)
    rows = np.frombuffer(next(lists), dtype=np.uint32)
    for docs in lists:
        rows = np.intersect1d(rows, np.frombuffer(docs, dtype=np.uint32), assume_unique=True)
        if not len(rows):
            return []
    found: list[int] = rows.tolist()
    return found


def layout(
    slots: array[int], tids: array[int], tfs: array[int], vocabulary: int
) -> tuple[list[int], bytes, bytes, bytes]:
    """The postings of (slot, term, tf) triples given in slot order, as `bm25.dump` lays them
    out: per term the count, then every term's slots and tfs back to back (each term's in
    slot order: a stable sort by term), and the document frequencies."""
    terms = np.frombuffer(tids, dtype=np.uint32)
    order = np.argsort(terms, kind="stable")
    counts = np.bincount(terms, minlength=vocabulary).astype(np.uint32)
    docs = np.frombuffer(slots, dtype=np.uint32)[order]
    freqs = np.frombuffer(tfs, dtype=np.uint32)[order]
    post: list[int] = counts.tolist()
    return post, docs.tobytes(), freqs.tobytes(), counts.tobytes()
