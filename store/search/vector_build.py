"""What building the vector signal costs, and the neutral texts its no-meaning anchor comes from.

A model tells what embedding some texts will cost (`Pace`, measured as it embeds), so a search
embeds inline only what fits `INLINE_SECONDS`; a larger backlog (a fresh store, a new model) is
embedded by a builder thread in batches of about `BATCH_SECONDS` (store.search.vectors), saved
every `SAVE_SECONDS`, while searches answer from BM25 alone and say how far it has got.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

T = TypeVar("T")

INLINE_SECONDS: Final = 0.2
"""The embedding a search may wait for; past it, the builder thread takes the backlog."""
BATCH_SECONDS: Final = 0.25
"""About how long one builder batch embeds before it hands its vectors in (and how long a
process on its way out waits for the batch under way)."""
SAVE_SECONDS: Final = 3.0
"""How often the builder writes vectors.bin, so a process that exits keeps its progress."""
_OVERHEAD_CHARS: Final = 32
"""What a text costs beyond its characters (special tokens, a row of the batch)."""

BACKGROUND: Final = (
    "The train to the coast leaves at seven in the morning.",
    "Add two cups of flour and stir until the dough is smooth.",
    "The goalkeeper saved a penalty in the last minute of the match.",
    "Tulips should be planted in autumn, before the ground freezes.",
    "The museum opens a new exhibition of medieval tapestries next week.",
    "Her grandmother knitted a red scarf for the winter.",
    "The orchestra tuned their instruments before the symphony began.",
    "Whales migrate thousands of kilometres every year to breed.",
    "The recipe calls for fresh basil, garlic and olive oil.",
    "Rain is expected over the weekend with strong winds in the north.",
    "The novel follows a family across three generations in a small village.",
    "He painted the fence white and planted roses along the path.",
    "The mountain trail is closed after heavy snowfall.",
    "Children built a sandcastle at the beach during the summer holiday.",
    "The bakery on the corner sells croissants until noon.",
    "A flock of geese flew south over the lake at dusk.",
    "The wedding reception was held in a barn decorated with lanterns.",
    "She practised the violin for two hours every evening.",
    "The ancient temple was rebuilt after the earthquake.",
    "Our neighbours adopted a puppy from the animal shelter.",
    "The farmers harvested the wheat before the storm arrived.",
    "A good night's sleep helps the body recover after exercise.",
    "The ferry crossed the strait in calm water under a clear sky.",
    "The poet read her verses aloud in the candlelit library.",
)
"""Short sentences from domains a coding memory never touches: a query's mean cosine with them
is what this model gives a text that shares no meaning with it (the fusion anchor,
store.search.fusion). Fixed: changing them changes every fused score."""


class Pace:
    """Seconds a model takes per character of text, measured on its larger embeddings."""

    def __init__(self, prior: float) -> None:
        self.rate = prior
        """Seconds per character: the model's prior until a large enough batch has been timed."""
        self._lock = threading.Lock()

    def predict(self, texts: Sequence[str]) -> float:
        """Seconds embedding `texts` is expected to take."""
        return self.rate * sum(len(t) + _OVERHEAD_CHARS for t in texts)

    def timed(self, texts: Sequence[str], embed: Callable[[], T]) -> T:
        """`embed()`'s result; its time updates the rate when the texts are large enough to say."""
        started = time.perf_counter()
        out = embed()
        elapsed = time.perf_counter() - started
        chars = sum(len(t) + _OVERHEAD_CHARS for t in texts)
        if chars >= 2000:  # a query's few words measure the call's overhead, not the model
            with self._lock:
                self.rate = 0.5 * self.rate + 0.5 * elapsed / chars
        return out


def progress(done: int, total: int) -> str:
    """The build's state as status and search diagnostics say it."""
    return f"building: {done:,} of {total:,} memories embedded"


__all__ = ["BACKGROUND", "BATCH_SECONDS", "INLINE_SECONDS", "Pace", "SAVE_SECONDS", "progress"]
