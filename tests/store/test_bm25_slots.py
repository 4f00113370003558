"""Postings stay in slot order when a removed document's slot is reused (store.search.bm25),
so removing a document finds each posting by bisection; scores are unchanged by it."""

from __future__ import annotations

import random

import pytest

from store.search.bm25 import InvertedIndex


@pytest.mark.parametrize("seed", range(4))
def test_reused_slots_keep_postings_sorted_and_scores_equal_a_fresh_index(seed: int) -> None:
    rnd = random.Random(seed)
    words = [f"w{i}" for i in range(30)]
    live: dict[int, list[str]] = {}
    index = InvertedIndex()
    for step in range(600):
        key = rnd.randrange(80)
        if key in live and rnd.random() < 0.4:
            index.remove(key)
            del live[key]
        else:  # a new document, or an edit: remove and add under the same key
            tokens = [rnd.choice(words) for _ in range(rnd.randint(1, 12))]
            index.add(key, tokens, tag=str(step))
            live[key] = tokens
    for tid in range(len(index._df)):
        docs, _ = index._postings(tid)
        assert list(docs) == sorted(docs)
    fresh = InvertedIndex()
    for key in sorted(live):
        fresh.add(key, live[key])
    for _ in range(30):
        query = rnd.sample(words, rnd.randint(1, 4))
        assert dict(index.scores(query)) == dict(fresh.scores(query))
