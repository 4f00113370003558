"""The store's search side: BM25 over the visible memories, fused with the vector signal where
it takes part, judged for whether anything answers (store.search.confidence), and the vector
index's state. The Store (store.store) owns one and hands it the view; the write path's
verdicts ask it for neighbours (store.propose.verdicts)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from store.config import Config
from store.files.memory import Memory
from store.search.confidence import WORDS_FIRST, Judged, lines, meaning
from store.search.fusion import fuse, model_weight
from store.search.lexical import Hit, Key, SearchIndex, key_of, snippet
from store.search.vector_extra import available, disabled_by_env, missing

if TYPE_CHECKING:
    from store.read.view import View
    from store.search.vectors import VectorIndex

ROUTE_HITS: Final = 200
"""The best search hits a task's routing scores (store.read.route keeps at most 20 of them)."""


@dataclass(frozen=True, slots=True)
class SearchEntry:
    id: str
    type: str
    scope: str
    score: float
    title: str
    snippet: str


@dataclass(frozen=True, slots=True)
class SearchResult:
    entries: list[SearchEntry]
    backends: tuple[str, ...]
    """The signals that took part: `bm25`, and `vectors:<model>` when the vector signal did."""
    diagnostics: tuple[tuple[str, str], ...] = ()
    no_match: str = ""
    """Why no memory answers the query, when none does (store.search.confidence)."""


def visible(view: View, memory: Memory) -> bool:
    """Not shadowed by a project memory of the same id, and (notes) not expired."""
    table = view.durable if memory.tier == "durable" else view.notes
    return table.get(memory.id) is memory


class Finder:
    def __init__(
        self,
        project_root: Path,
        search_path: Path,
        *,
        view: Callable[[], View],
        config: Callable[[], Config],
        keeps: bool,
        writable: bool,
        key: Callable[[], bytes],
        notice: Callable[[str, str], None],
        one_shot: bool,
        env: Mapping[str, str],
    ) -> None:
        """`keeps`: the search index may be saved; `writable`: the vector index may be (a
        store whose home cannot be used keeps neither)."""
        self._view = view
        self._config = config
        self.lexical = SearchIndex(search_path, writable=keeps, key=key, notice=notice)
        self._vectors: VectorIndex | None = None
        """Made on first use: the server's handshake never imports the vector module."""
        self._vectors_path = project_root / "vectors.bin"
        self._vector_options: dict[str, Any] = {
            "writable": writable,
            "key": key,
            "notice": notice,
            "one_shot": one_shot,
        }
        self._vectors_env = {"ENGRAM_VECTORS": env.get("ENGRAM_VECTORS", "")}
        self._lock = threading.Lock()
        self._by_key: tuple[tuple[Any, ...], dict[Key, Memory]] = ((), {})
        self.answered = threading.Event()
        """Set once a search has answered (or by the store's `close`): the warm-up loads what
        the first search can do without (numpy's kernels, the vector model) after it, not while
        it competes for the GIL."""
        self.warming = False
        """True while the warm-up has yet to load the vector model and embeddings: a search
        meanwhile answers from BM25 alone (and says so in its backends) instead of waiting."""

    def save(self) -> None:
        """Write the search index, and stop a vector build under way after its batch, its
        progress saved."""
        self.lexical.save()
        if self._vectors is not None:
            self._vectors.stop()
            self._vectors.save()

    def vectors_on(self) -> bool:
        """The vector signal takes part: extra installed, not off by ENGRAM_VECTORS or config."""
        config = self._config()
        return config.vectors and not disabled_by_env(self._vectors_env) and available(config.vector_model)

    def meaning_ready(self) -> bool:
        """The vector signal is on and `warm` is not still loading it (searches meanwhile answer
        from BM25 alone)."""
        return not self.warming and self.vectors_on()

    def vector_index(self) -> VectorIndex:
        with self._lock:  # the warm-up thread and a first search may both get here
            if self._vectors is None:
                from store.search.vectors import VectorIndex  # seam: numpy, tokenizers, safetensors

                self._vectors = VectorIndex(self._vectors_path, **self._vector_options)
            return self._vectors

    def keyed(self, view: View) -> dict[Key, Memory]:
        if self._by_key[0] != view.key:
            self._by_key = (view.key, {key_of(m): m for m in view.everything()})
        return self._by_key[1]

    def scores(self, view: View, *, fused: bool = True) -> Callable[[str], dict[str, float]]:
        """A task's scores for routing: search's own (BM25, fused with the vector signal where
        it takes part and `fused`), over the active durable memories. A session start routes by
        git's words (branch, commit subjects: names, not meaning) with BM25 alone, so the hook
        never waits for a model to load."""

        def scores(query: str) -> dict[str, float]:
            durable = view.durable

            def wanted(memory: Memory) -> bool:
                return memory.active and durable.get(memory.id) is memory

            if not fused:
                return {m.id: score for m, score in self.lexical.scored(query, ROUTE_HITS) if wanted(m)}
            hits, _, _ = self.fused(query, self.lexical.search(query, ROUTE_HITS), view, ROUTE_HITS, wanted)
            return {h.memory.id: h.score for h in hits}

        return scores

    def fused(
        self, query: str, hits: list[Hit], view: View, top: int | None, wanted: Callable[[Memory], bool]
    ) -> tuple[list[Hit], list[str], Judged]:
        """The BM25 hits that search may return (`wanted`), fused with the vector signal when it
        is on and `warm` is not still loading it (store.search.fusion), less those that do not
        answer the query (store.search.confidence); the backends used, and the best of each
        confidence scale (why nothing answered, when nothing did). Both signals are
        standardised over wanted memories only: a superseded or filtered-out memory never
        shapes the scale."""
        hits = [h for h in hits if wanted(h.memory)]
        coverage = self.lexical.coverage(query, [key_of(h.memory) for h in hits])
        best = max(coverage.values(), default=0.0)
        scored = None
        config = self._config()
        bm25 = {key_of(h.memory): h.score for h in hits}
        if self.meaning_ready():
            scored = self.vector_index().scores(
                query, config.vector_model, lambda: self.keyed(view), view.key, want=bm25, top=top
            )
        if scored is None or scored.building is not None:  # off, no model, or its first build runs on
            held_to = lines(None)
            opened = any(held_to.opens(value, None) for value in coverage.values())
            kept = [h for h in hits if opened and held_to.keeps(coverage[key_of(h.memory)], None)]
            return kept, ["bm25"], Judged(best)
        by_key = self.keyed(view)
        vectors = {k: v for k, v in scored.scores.items() if k in by_key and wanted(by_key[k])}
        meant = {k: meaning(v, scored.anchor) for k, v in vectors.items()}
        held_to = lines(scored.model, scored.spread)
        judged = Judged(best, max(meant.values(), default=0.0), held_to)
        fused_scores = fuse(bm25, vectors, model_weight(scored.model, config.bm25_weight), scored.anchor)
        if not any(held_to.opens(coverage.get(k, 0.0), meant.get(k)) for k in fused_scores):
            return [], ["bm25", f"vectors:{scored.model}"], judged
        fused = [
            Hit(by_key[k], round(v, 4))
            for k, v in fused_scores.items()
            if held_to.keeps(coverage.get(k, 0.0), meant.get(k))
        ]
        every_word = self.lexical.holding_every_word(query, [key_of(h.memory) for h in fused])
        by_words = sorted(
            (k for k in (key_of(h.memory) for h in fused) if coverage.get(k, 0.0) >= held_to.coverage),
            key=lambda k: -bm25[k],
        )
        words_first = set(by_words[:WORDS_FIRST])  # what the words found keeps its place
        fused.sort(
            key=lambda h: (
                key_of(h.memory) not in every_word,
                key_of(h.memory) not in words_first,
                -h.score,
                h.memory.id,
                h.memory.tier,
                h.memory.scope,
            )
        )
        return fused, ["bm25", f"vectors:{scored.model}"], judged

    def find(
        self,
        query: str,
        *,
        limit: int = 10,
        types: Sequence[str] = (),
        scope: str | None = None,
        include_notes: bool = True,
        include_superseded: bool = False,
    ) -> SearchResult:
        """`search` with the backends that took part and what stopped the vector signal."""
        view = self._view()

        def wanted(memory: Memory) -> bool:
            return (
                visible(view, memory)
                and (include_notes or memory.tier != "working")
                and (include_superseded or memory.active)
                and (not types or memory.type in types)
                and (not scope or memory.scope == scope)
            )

        top: int | None = max(4 * limit, 100)
        while True:
            found = self.lexical.search(query, top)
            hits, backends, judged = self.fused(query, found, view, top, wanted)
            chosen = hits[:limit]
            if len(chosen) == limit or top is None or len(found) < top:
                break
            top = None  # filters removed too many of the best: look at every hit
        entries = [
            SearchEntry(
                h.memory.id,
                h.memory.type,
                h.memory.scope,
                h.score,
                h.memory.title,
                snippet(h.memory.body, query),
            )
            for h in chosen
        ]
        self.answered.set()
        no_match = "" if entries else judged.why_none()
        return SearchResult(entries, tuple(backends), self.vector_diagnostics(), no_match)

    def vector_diagnostics(self) -> tuple[tuple[str, str], ...]:
        """Why the vector signal did not take part although it is on: a bad or missing model
        (a named model whose extra is not installed), or its first build still running."""
        config = self._config()
        if not config.vectors or disabled_by_env(self._vectors_env):
            return ()
        if (lacking := missing(config.vector_model)) is not None:
            return (("ENGRAM_CONFIG", f"{lacking}; search uses BM25 alone"),)
        if self._vectors is None or not available(config.vector_model):
            return ()
        if (problem := self._vectors.problem()) is not None:
            code = "ENGRAM_CONFIG" if config.vector_model else "ENGRAM_VECTORS_UNAVAILABLE"
            return ((code, f"{problem}; search uses BM25 alone"),)
        if (building := self._vectors.progress()) is not None:
            return (
                (
                    "ENGRAM_VECTORS_BUILDING",
                    f"{building}; search uses BM25 alone until then (`engram index` builds the rest now)",
                ),
            )
        return ()

    def vector_state(self) -> dict[str, Any]:
        """The vector signal for status: `state` off (also without any model's extra, which
        status then does not mention), unavailable, loading, building or ready, with the model
        and how many memories have their vectors. Loads the model when it is on (the CLI's
        status), which starts a first build if one is due."""
        config = self._config()
        if not config.vectors or disabled_by_env(self._vectors_env):
            return {"state": "off"}
        if (lacking := missing(config.vector_model)) is not None:
            return {"state": "unavailable", "problem": lacking}
        if not available(config.vector_model):
            return {"state": "off"}
        view = self._view()
        index = self.vector_index()
        if not self.warming:  # the warm-up has the lock while it loads: never wait for it
            index.scores("", config.vector_model, lambda: self.keyed(view), view.key, top=0)
        if (problem := index.problem()) is not None:
            return {"state": "unavailable", "problem": problem}
        state = index.state()
        if state is None:
            return {"state": "loading"}
        model, embedded, total = state
        building = index.progress() is not None
        return {
            "state": "building" if building else "ready",
            "model": model,
            "embedded": embedded,
            "memories": total,
        }

    def build_vectors(self, told: Callable[[int, int], None]) -> dict[str, Any]:
        """Embed every memory still waiting for its vectors, on this thread (`engram index`),
        `told(done, total)` as it goes; the vector state after (`vector_state`)."""
        if self.vector_state()["state"] == "building":
            self.vector_index().build(told)
        return self.vector_state()
