"""BM25 search over title + tags + body (SPEC §3.1), built once and refreshed by content hash.

Field weights are applied by repetition: title tokens count three times, tags twice, body
once, so BM25Okapi (rank-bm25, the reference for scores) ranks title and tag hits higher.
Token lists are cached per (memory, content hash); only changed memories are re-tokenised.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from store.memory import Memory
from store.tokenize import tokenize

TITLE_WEIGHT: Final = 3
TAG_WEIGHT: Final = 2
SNIPPET_CHARS: Final = 160


@dataclass(frozen=True, slots=True)
class Hit:
    memory: Memory
    score: float


def document_tokens(memory: Memory) -> list[str]:
    title = tokenize(memory.title)
    tags = tokenize(" ".join(memory.tags))
    return title * TITLE_WEIGHT + tags * TAG_WEIGHT + tokenize(memory.body)


class SearchIndex:
    """A BM25 model over a set of memories, rebuilt only when that set changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[tuple[str, str, str], list[str]] = {}
        self._digest = ""
        self._docs: tuple[Memory, ...] = ()
        self._model: Any = None

    def prepare(self, memories: Sequence[Memory]) -> None:
        digest = hashlib.sha256("\n".join(f"{m.tier}/{m.id}:{m.hash}" for m in memories).encode()).hexdigest()
        with self._lock:
            if digest == self._digest:
                return
            fresh: dict[tuple[str, str, str], list[str]] = {}
            corpus: list[list[str]] = []
            for memory in memories:
                key = (memory.tier, memory.id, memory.hash)
                tokens = self._tokens.get(key)
                if tokens is None:
                    tokens = document_tokens(memory)
                fresh[key] = tokens
                corpus.append(tokens)
            self._tokens = fresh
            self._docs = tuple(memories)
            self._model = _bm25(corpus)
            self._digest = digest

    def search(self, query: str) -> list[Hit]:
        """Every memory with a positive score, best first, ties broken by id."""
        terms = tokenize(query)
        with self._lock:
            model, docs = self._model, self._docs
        if model is None or not terms:
            return []
        scores = model.get_scores(terms)
        hits = [
            Hit(doc, round(float(score), 4)) for doc, score in zip(docs, scores, strict=True) if score > 0
        ]
        hits.sort(key=lambda h: (-h.score, h.memory.id, h.memory.tier))
        return hits


def _bm25(corpus: list[list[str]]) -> Any:
    if not corpus or not any(corpus):
        return None
    from rank_bm25 import BM25Okapi

    return BM25Okapi(corpus)


def snippet(body: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """The ~`width`-character stretch of `body` that holds the most query terms."""
    text = " ".join(body.split())
    if len(text) <= width:
        return text
    terms = set(tokenize(query))
    best_start, best_hits = 0, -1
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch in " " and i + 1 < len(text)]
    for start in starts[:: max(1, len(starts) // 400)]:
        hits = len(terms.intersection(tokenize(text[start : start + width])))
        if hits > best_hits:
            best_start, best_hits = start, hits
    piece = text[best_start : best_start + width].rstrip()
    prefix = "…" if best_start > 0 else ""
    suffix = "…" if best_start + width < len(text) else ""
    return f"{prefix}{piece}{suffix}"
