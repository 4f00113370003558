"""Whether a memory answers a query at all: the line below which search says "no match".

The rest, and why: docs/design.md, `store/search/confidence.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Lines:
    """The gate (`coverage`, `meaning`: does anything answer?) and the hit lines a memory of an
    answered query clears to be returned. `meaning` is None for BM25 alone."""

    coverage: float
    meaning: float | None
    hit_coverage: float
    hit_meaning: float | None

    def opens(self, coverage: float, meant: float | None) -> bool:
        """Whether a candidate with this coverage and meaning answers the query."""
        return _clears(coverage, meant, self.coverage, self.meaning)

    def keeps(self, coverage: float, meant: float | None) -> bool:
        """Whether a candidate of an answered query is returned."""
        return _clears(coverage, meant, self.hit_coverage, self.hit_meaning)


def _clears(coverage: float, meant: float | None, words: float, meaning: float | None) -> bool:
    return coverage >= words or (meant is not None and meaning is not None and meant >= meaning)


BM25_LINES: Final = Lines(coverage=0.25, meaning=None, hit_coverage=0.0, hit_meaning=None)
"""BM25 alone: a memory holding a quarter of the query's idf mass answers; then every memory
that shares a word is returned, best first."""
MODEL_LINES: Final = {
    "all-MiniLM-L6-v2-int8": Lines(coverage=0.35, meaning=0.275, hit_coverage=0.15, hit_meaning=0.1),
    "wordllama-l2_supercat_256": Lines(coverage=0.4, meaning=0.275, hit_coverage=0.15, hit_meaning=0.1),
}
"""Per bundled model: with meaning to answer for partial word matches, words alone are asked
for more than without it."""
UNMEASURED_SPREADS: Final = 5.0
"""For a model engram has not measured (a folder of the user's): the gate's meaning is this
many of the baseline's standard deviations, a scale every model has (its hit line, two)."""
WORDS_FIRST: Final = 5
"""With vectors, BM25's best this many of the memories whose words open the gate come first
(in fused order): meaning fills and orders the rest, and never pushes a memory the words found
out of the first five."""


def lines(model: str | None, spread: float = 0.0) -> Lines:
    """The lines a query is held to: BM25's (`model` None), or a vector model's (`spread`: the
    query's baseline spread, for a model engram has not measured)."""
    if model is None:
        return BM25_LINES
    return MODEL_LINES.get(model) or Lines(0.35, UNMEASURED_SPREADS * spread, 0.15, 2.0 * spread)


def meaning(cosine: float, anchor: float) -> float:
    """A cosine on the meaning scale: how far it stands above the no-meaning baseline."""
    return cosine - anchor


@dataclass(frozen=True, slots=True)
class Judged:
    """The best of each scale among a query's candidates, to say why nothing answered."""

    coverage: float = 0.0
    meaning: float | None = None
    """None when the vector signal did not take part."""
    held_to: Lines = BM25_LINES

    def why_none(self) -> str:
        """Why no memory answered, in one sentence."""
        words = (
            "no memory shares a word with it"
            if self.coverage <= 0
            else f"the closest memory holds {self.coverage:.0%} of its words' weight (at least "
            f"{self.held_to.coverage:.0%} answers)"
        )
        if self.meaning is None or self.held_to.meaning is None:
            return words
        return (
            f"{words}, and none is near it in meaning ({self.meaning:.2f} where "
            f"{self.held_to.meaning:.2f} answers)"
        )


__all__ = ["BM25_LINES", "MODEL_LINES", "WORDS_FIRST", "Judged", "Lines", "lines", "meaning"]
