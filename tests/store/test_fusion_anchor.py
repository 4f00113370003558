"""The vector signal's no-meaning anchor (store.search.fusion, issue 21): the model's own
cosine for a text that shares no meaning with the query, not a fixed 0 nor the lowest candidate.

No model here: the cosines are made up, as a model whose cosines are all positive (MiniLM-class
models on some texts, e5, any anisotropic embedding) gives them.
"""

from __future__ import annotations

import pytest

from store.search.fusion import fuse

BM25 = {"b": 2.0, "c": 1.5, "d": 0.4}
CENTRED = {"a": 0.55, "b": 0.1, "c": 0.35, "d": -0.05, "e": 0.02}
"""Cosines of a model centred on 0 (an unrelated text near 0)."""


def _positive(cosine: float) -> float:
    """The same judgements from a model whose cosines all lie in [0.6, 0.9]."""
    return 0.6 + 0.3 * (cosine + 0.1) / 0.7


def test_a_model_whose_cosines_are_all_positive_fuses_as_the_centred_one_when_its_anchor_moves_with_it() -> (
    None
):
    """z-scores do not care where a model's cosines sit, only how they spread: the same
    judgements shifted into [0.6, 0.9], with the anchor shifted alike, fuse to the same scores.
    An anchor fixed at 0 is an outlier below all of them and flattens every vector z-score."""
    shifted = {k: _positive(v) for k, v in CENTRED.items()}
    centred = fuse(BM25, CENTRED, 0.6, 0.0)
    assert fuse(BM25, shifted, 0.6, _positive(0.0)) == pytest.approx(centred)
    flattened = fuse(BM25, shifted, 0.6, 0.0)  # the old anchor, at 0
    spread = centred["a"] - centred["d"]
    assert flattened["a"] - flattened["d"] < 0.75 * spread


def test_with_all_positive_cosines_meaning_still_ranks_and_an_unrelated_memory_sits_near_the_anchor() -> None:
    vectors = {"a": 0.9, "b": 0.75, "c": 0.63}  # c: nothing in common with the query
    fused = fuse({}, vectors, 0.6, 0.62)
    assert sorted(fused, key=lambda k: -fused[k]) == ["a", "b", "c"]
    assert fused["c"] < 0.1 * fused["a"]
    assert fused["b"] > 0.4 * fused["a"]


def test_a_one_memory_store_found_by_meaning_alone_scores_above_zero_for_either_kind_of_model() -> None:
    """Anchored at the lowest candidate, a store's only memory would be its own anchor: 0."""
    assert fuse({}, {"only": 0.45}, 0.6, 0.02)["only"] > 0  # a centred model (wordllama)
    assert fuse({}, {"only": 0.85}, 0.6, 0.64)["only"] > 0  # a model with positive cosines


def test_a_memory_below_the_anchor_found_by_meaning_alone_scores_zero() -> None:
    fused = fuse({"a": 1.0}, {"a": 0.8, "z": 0.5}, 0.6, 0.6)
    assert fused["z"] == 0.0
    assert fused["a"] > 0


def test_a_candidate_the_vectors_did_not_score_takes_the_lower_of_the_lowest_cosine_and_the_anchor() -> None:
    """BM25 found `x`, which has no vectors: it is no better by meaning than a memory of none."""
    with_gap = fuse({"a": 1.0, "x": 1.0}, {"a": 0.8, "b": 0.7}, 0.6, 0.3)
    as_anchor = fuse({"a": 1.0, "x": 1.0}, {"a": 0.8, "b": 0.7, "x": 0.3}, 0.6, 0.3)
    assert with_gap == pytest.approx(as_anchor)
