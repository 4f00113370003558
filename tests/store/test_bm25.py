"""store.search.bm25: BM25 with Lucene's idf, checked against a rank-bm25 oracle, kept up to date one
document at a time."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
from rank_bm25 import BM25

from store.search.bm25 import CorruptIndex, InvertedIndex, dump, load


class LuceneBM25(BM25):  # type: ignore[misc]
    """The scoring oracle (SPEC §3.1): rank-bm25's BM25Okapi term weight with Lucene's idf,
    log(1 + (N - n + 0.5) / (n + 0.5)), which is positive for every term."""

    def __init__(self, corpus: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        super().__init__(corpus)

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))

    def get_scores(self, query: list[str]) -> Any:
        score = np.zeros(self.corpus_size)
        doc_len = np.array(self.doc_len)
        for q in query:
            q_freq = np.array([(doc.get(q) or 0) for doc in self.doc_freqs])
            score += (self.idf.get(q) or 0) * (
                q_freq * (self.k1 + 1) / (q_freq + self.k1 * (1 - self.b + self.b * doc_len / self.avgdl))
            )
        return score


WORDS = [f"w{i}" for i in range(200)]


def _corpus(seed: int) -> dict[int, list[str]]:
    rng = random.Random(seed)
    return {
        n: [rng.choice(WORDS[: rng.randint(3, 200)]) for _ in range(rng.randint(1, 40))] for n in range(300)
    }


def _assert_same(index: InvertedIndex, corpus: dict[int, list[str]], query: list[str]) -> None:
    keys = list(corpus)
    reference = LuceneBM25([corpus[k] for k in keys]).get_scores(query)
    mine = dict(index.scores(query))
    for position, key in enumerate(keys):
        if set(query) & set(corpus[key]):
            assert reference[position] > 0  # a document sharing a query term always scores
        if reference[position] > 0:
            assert mine[key] == pytest.approx(reference[position], abs=1e-9)
        else:
            assert key not in mine


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_the_lucene_idf_oracle_after_adds_and_removes(seed: int) -> None:
    """rank-bm25 with Lucene's idf is the reference for every score (issue 10), through adds
    and removes; the corpus has terms in more than half the documents, where BM25Okapi's idf
    is zero or negative."""
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


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_a_term_in_half_the_documents_or_more_still_finds_them(size: int) -> None:
    """Lucene's idf is positive for every term: in a store of 1 to 5 documents, a term in every
    document, and one in exactly half of them, finds all of those documents (BM25Okapi's idf
    is zero or negative there, and its results were dropped)."""
    index = InvertedIndex()
    corpus = {n: ["shared", f"own{n}"] + (["half"] if n < (size + 1) // 2 else []) for n in range(size)}
    for key, tokens in corpus.items():
        index.add(key, tokens)
    assert sorted(k for k, _ in index.scores(["shared"])) == list(range(size))
    assert sorted(k for k, _ in index.scores(["half"])) == list(range((size + 1) // 2))
    for key in corpus:
        assert [k for k, _ in index.scores([f"own{key}"])] == [key]
    for query in (["shared"], ["half"], ["own0", "shared"]):
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


def test_containing_finds_every_document_holding_all_terms_shortest_first() -> None:
    """`containing` intersects postings: the documents a text adds nothing to, shortest first
    (ties by key), none when a term is unknown."""
    index = InvertedIndex()
    index.add("long", ["a", "b", "c", "d", "e"])
    index.add("short", ["b", "a"])
    index.add("twin", ["a", "b"])
    index.add("partial", ["a", "c"])
    index.remove("partial")
    index.add("partial", ["a"])
    assert index.containing(["a", "b", "a"]) == ["short", "twin", "long"]
    assert index.containing(["a"]) == ["partial", "short", "twin", "long"]
    assert index.containing(["a", "zzz"]) == []
    assert index.containing([]) == []
    assert load(dump(index)).containing(["b", "a"]) == ["short", "twin", "long"]


def _random_index(rnd: random.Random, words: list[str], size: int, longest: int) -> InvertedIndex:
    """`size` documents of random words, then a few removed (slots freed)."""
    index = InvertedIndex()
    for key in range(size):
        index.add(key, [rnd.choice(words) for _ in range(rnd.randint(1, longest))])
    for key in rnd.sample(range(size), size // 7):
        index.remove(key)
    return index


def _plain_python(monkeypatch: pytest.MonkeyPatch, plain: bool) -> None:
    """Make every query take the plain-Python path, or every one the numpy path."""
    import store.search.bm25 as bm25

    bound = 10**9 if plain else -1
    monkeypatch.setattr(bm25, "SMALL_POSTINGS", bound)
    monkeypatch.setattr(bm25, "UNLOADED_POSTINGS", bound)


@pytest.mark.parametrize("seed", range(6))
def test_few_postings_score_the_same_without_numpy(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain-Python path for small queries gives numpy's scores, bit for bit, and the same
    `top` cut (ties included), after adds and removes."""
    rnd = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    index = _random_index(rnd, words, 300, 30)
    for _ in range(20):
        query = rnd.sample(words, rnd.randint(1, 4)) + ["absent"]
        top = rnd.choice([None, 1, 5, 50])
        answers = []
        for plain in (True, False):
            _plain_python(monkeypatch, plain)
            answers.append(sorted(index.scores(query, top), key=lambda pair: str(pair[0])))
        assert answers[0] == answers[1]


@pytest.mark.parametrize("seed", range(4))
def test_few_postings_cover_and_contain_the_same_without_numpy(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`covering` (every word of a query, each as itself or its stem) and `containing` give
    the same documents, in the same order, with and without numpy."""
    rnd = random.Random(seed)
    words = [f"w{i}" for i in range(12)]
    index = _random_index(rnd, words, 200, 12)
    among = rnd.sample(range(200), 150)
    found = 0
    for _ in range(20):
        groups = [rnd.sample([*words, "absent"], rnd.randint(1, 2)) for _ in range(rnd.randint(0, 3))]
        terms = rnd.sample(words, rnd.randint(1, 3))
        answers = []
        for plain in (True, False):
            _plain_python(monkeypatch, plain)
            answers.append((index.covering(groups, among), index.containing(terms)))
        assert answers[0] == answers[1]
        found += bool(answers[0][0]) + bool(answers[0][1])
    assert found > 10  # most queries find something: the comparison is not of empty sets
