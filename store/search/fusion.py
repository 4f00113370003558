"""Z-score fusion of two search signals (SPEC §3.1): a weighted sum of standardised scores.

The rest, and why: docs/design.md, `store/search/fusion.py`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Final, TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_BM25_WEIGHT: Final = 0.6
"""BM25's share for a model engram has not measured (a model folder of the user's)."""
MODEL_BM25_WEIGHTS: Final = {"all-MiniLM-L6-v2-int8": 0.1, "wordllama-l2_supercat_256": 0.1}
"""BM25's share per bundled model, chosen with the search's lines (store.search.confidence) by
`make calibrate` on the tune split only, over short coding rules, long conversational notes,
task descriptions and questions no memory answers (`make eval` reports the test split). A
memory whose words answer keeps its place among the first five whatever the weight
(store.search.confidence.WORDS_FIRST), so the weight orders meaning against words below them."""


def model_weight(model: str, configured: float | None) -> float:
    """BM25's share: `search.bm25_weight` when set, else the model's own, else the default."""
    return configured if configured is not None else MODEL_BM25_WEIGHTS.get(model, DEFAULT_BM25_WEIGHT)


BM25_FLOOR: Final = 0.0
"""What BM25 would give a memory that shares no query term."""
VECTOR_FLOOR: Final = 0.0
"""The cosine of a memory that shares no meaning with the query, for a model that gives none
of its own (orthogonal)."""


def zscores(values: list[float]) -> list[float]:
    """Standardised values (population std); all zeros when the values do not vary."""
    if not values:
        return []
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if std <= 1e-12 * max(1.0, abs(mean)):
        return [0.0] * len(values)
    return [(v - mean) / std for v in values]


def fuse(
    bm25: Mapping[K, float],
    vectors: Mapping[K, float],
    bm25_weight: float = DEFAULT_BM25_WEIGHT,
    vector_anchor: float = VECTOR_FLOOR,
) -> dict[K, float]:
    """bm25_weight · z(BM25) + (1 − bm25_weight) · z(vectors) for every key of either map,
    less the same sum for the no-match anchor (so ≥ 0); `vector_anchor` is the cosine of a
    memory that shares no meaning with the query."""
    keys = list(dict.fromkeys([*bm25, *vectors]))
    vector_floor = min(min(vectors.values()), vector_anchor) if vectors else vector_anchor
    z_bm25 = zscores([*(bm25.get(k, BM25_FLOOR) for k in keys), BM25_FLOOR])
    z_vectors = zscores([*(vectors.get(k, vector_floor) for k in keys), vector_anchor])
    weight = min(1.0, max(0.0, bm25_weight))
    anchor = weight * z_bm25[-1] + (1.0 - weight) * z_vectors[-1]
    return {
        k: max(0.0, weight * zb + (1.0 - weight) * zv - anchor)
        for k, zb, zv in zip(keys, z_bm25[:-1], z_vectors[:-1], strict=True)
    }
