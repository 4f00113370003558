"""store.bm25: rank-bm25's BM25Okapi scores, kept up to date one document at a time."""

from __future__ import annotations

import random

import pytest
from rank_bm25 import BM25Okapi

from store.bm25 import CorruptIndex, InvertedIndex, dump, load

WORDS = [f"w{i}" for i in range(200)]


def _corpus(seed: int) -> dict[int, list[str]]:
    rng = random.Random(seed)
    return {
        n: [rng.choice(WORDS[: rng.randint(3, 200)]) for _ in range(rng.randint(1, 40))] for n in range(300)
    }


def _assert_same(index: InvertedIndex, corpus: dict[int, list[str]], query: list[str]) -> None:
    keys = list(corpus)
    reference = BM25Okapi([corpus[k] for k in keys]).get_scores(query)
    mine = dict(index.scores(query))
    for position, key in enumerate(keys):
        if reference[position] > 0:
            assert mine[key] == pytest.approx(reference[position], abs=1e-9)
        else:
            assert key not in mine


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_rank_bm25_after_adds_and_removes(seed: int) -> None:
    """engram's choice: rank-bm25 stays the reference for every score (issue 5)."""
    corpus = _corpus(seed)
    index = InvertedIndex()
    for key, tokens in corpus.items():
        index.add(key, tokens)
    for key in range(0, 300, 7):
        index.remove(key)
        del corpus[key]
    for key in range(0, 300, 11):
        corpus[key] = ["w1", "w2", "w2"]
        index.add(key, corpus[key])
    for query in (["w1"], ["w2", "w3", "w3"], ["w150", "w0"], ["absent"]):
        _assert_same(index, corpus, query)


def test_a_saved_index_loads_and_keeps_updating() -> None:
    """A new process maps the saved index and can still add and remove documents."""
    corpus = _corpus(4)
    index = InvertedIndex()
    for key, tokens in corpus.items():
        index.add(("project", "durable", str(key)), tokens, tag=f"h{key}")
    loaded = load(dump(index))
    assert loaded.tag(("project", "durable", "5")) == "h5"
    loaded.remove(("project", "durable", "5"))
    loaded.add(("project", "durable", "new"), ["w1", "w1"], tag="x")
    again = load(dump(loaded))
    assert sorted(again.scores(["w1"])) == sorted(loaded.scores(["w1"]))
    assert ("project", "durable", "5") not in again and ("project", "durable", "new") in again


def test_top_keeps_the_best_and_their_ties() -> None:
    """top=k returns the k best (plus ties with the last), so callers can order ties by id."""
    index = InvertedIndex()
    for key in range(50):
        index.add(key, ["same"] if key < 10 else ["other"])
    best = index.scores(["same"], top=3)
    assert sorted(k for k, _ in best) == list(range(10))


@pytest.mark.parametrize("damage", ["magic", "truncate"])
def test_a_damaged_saved_index_is_refused(damage: str) -> None:
    """A saved index whose header or sizes do not add up raises ValueError (callers rebuild)."""
    index = InvertedIndex()
    for key in range(20):
        index.add(key, [f"w{key % 3}", "shared"])
    data = bytearray(dump(index))
    if damage == "magic":
        data[0:4] = b"XXXX"
    else:
        del data[-5:]
    with pytest.raises(ValueError):
        load(bytes(data))


def test_a_posting_past_the_documents_is_caught_when_read() -> None:
    """Postings are read lazily; one pointing past the documents raises CorruptIndex then."""
    index = InvertedIndex()
    for key in range(20):
        index.add(key, ["shared"])
    data = bytearray(dump(index))
    docs_base = load(bytes(data))._blob.docs_base  # type: ignore[union-attr]
    data[docs_base : docs_base + 4] = (10**6).to_bytes(4, "little")
    with pytest.raises(CorruptIndex):
        load(bytes(data)).scores(["shared"])
