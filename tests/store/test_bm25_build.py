"""`bm25_build.build` (a fresh store's index in one pass) gives the index `add` gives one document at a
time: the same bytes when dumped, so the same scores, whatever path a store took."""

from __future__ import annotations

import random

import pytest

from store.search import bm25, bm25_build


def _documents(count: int, seed: int) -> list[tuple[tuple[str, str, str], list[str], str]]:
    rng = random.Random(seed)
    words = [f"w{n}" for n in range(300)] + ["migration", "retry", "cache"]
    return [
        (("project", "durable", f"m-{n}"), [rng.choice(words) for _ in range(rng.randint(0, 40))], f"h{n}")
        for n in range(count)
    ]


@pytest.mark.parametrize("count", [0, 5, bm25_build.BULK_DOCUMENTS, bm25_build.BULK_DOCUMENTS + 777])
def test_a_built_index_is_the_one_added_document_by_document(count: int) -> None:
    documents = _documents(count, seed=count)
    added = bm25.InvertedIndex()
    for key, tokens, tag in documents:
        added.add(key, tokens, tag)
    built = bm25_build.build(documents)
    assert bm25.dump(built) == bm25.dump(added)
    for query in (["migration", "retry"], ["w1", "w2", "cache"], ["absent"]):
        assert sorted(built.scores(query)) == sorted(added.scores(query))
    if documents:
        built.remove(documents[0][0])
        added.remove(documents[0][0])
        built.add(("project", "durable", "new"), ["retry"] * 3, "t")
        added.add(("project", "durable", "new"), ["retry"] * 3, "t")
        assert bm25.dump(built) == bm25.dump(added)
