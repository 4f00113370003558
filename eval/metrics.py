"""Ranking metrics over one query's ranked ids and its graded labels.

Labels map a memory id to a grade: 2 = the answer, 1 = relevant, absent = not relevant.
- recall@k: the share of the query's answers (grade 2) found in the first k results; a query
  whose labels hold no grade 2 counts every labelled id as an answer.
- nDCG@k: graded gain (2^grade - 1) discounted by log2(rank + 1), divided by the best possible
  ordering of the labelled ids, so a grade-1 memory above the answer costs a little.
- reciprocal rank: 1 / rank of the first answer in the ranked list (0 when it is absent); MRR is
  its mean over queries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def answers(labels: Mapping[str, int]) -> set[str]:
    best = {m for m, grade in labels.items() if grade >= 2}
    return best or {m for m, grade in labels.items() if grade > 0}


def recall_at(ranked: Sequence[str], labels: Mapping[str, int], k: int) -> float:
    wanted = answers(labels)
    if not wanted:
        return 0.0
    return len(wanted & set(ranked[:k])) / len(wanted)


def ndcg_at(ranked: Sequence[str], labels: Mapping[str, int], k: int) -> float:
    def gain(grade: int) -> float:
        return float(2**grade - 1)

    dcg = sum(gain(labels.get(m, 0)) / math.log2(i + 2) for i, m in enumerate(ranked[:k]))
    ideal = sorted((g for g in labels.values() if g > 0), reverse=True)[:k]
    idcg = sum(gain(g) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def reciprocal_rank(ranked: Sequence[str], labels: Mapping[str, int]) -> float:
    wanted = answers(labels)
    for i, m in enumerate(ranked):
        if m in wanted:
            return 1.0 / (i + 1)
    return 0.0
