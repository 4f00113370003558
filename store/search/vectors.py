"""The optional vector signal's index (extra `vectors`, SPEC §3.1): every memory's window
vectors, by content hash, in `.engram/vectors.bin` (derived, gitignored, sealed), refreshed
incrementally, and the cosine of a query with each memory's best window.

Only new or changed memories are embedded; vectors no memory uses are dropped; the file is
rebuilt when unreadable, when its tag does not match, or when the model changes. The models and
the windows a memory is embedded as are store.search.embedders. Loading is lazy: the Store's
search side (store.finder) imports this module only when the signal is on and first used; while
a server's warm-up loads it, searches answer from BM25 alone.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from store.errors import ModelUnavailable
from store.files.derived import DerivedFile
from store.files.fsutil import read_regular
from store.files.memory import Memory
from store.search import vector_rows
from store.search.embedders import Model, load_model, windows
from store.search.vector_build import (
    BACKGROUND,
    BATCH_SECONDS,
    INLINE_SECONDS,
    SAVE_SECONDS,
    progress,
)
from store.search.vector_extra import (
    FILE_BYTES_BASE,
    FILE_BYTES_PER_MEMORY,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Rows = npt.NDArray[np.float16] | npt.NDArray[np.float32]
    """A memory's window vectors: float32 when just embedded, float16 as vectors.bin holds them."""

log = logging.getLogger("engram.store")

Key = tuple[str, str, str]
"""(scope, tier, id), as in store.search."""


_BACKGROUND_KEY: Final = (
    "background:" + hashlib.sha256("\n".join(BACKGROUND).encode("utf-8")).hexdigest()[:16]
)
"""vectors.bin's entry for the BACKGROUND sentences' vectors: a process that reads the file
does not embed them again (24 model runs, most of a CLI read's time)."""


@dataclass(frozen=True, slots=True)
class Scored:
    """What the signal says about one query: the model's name, the cosine per memory key, and
    `anchor`, the cosine this model gives a text that shares no meaning with the query (the mean
    over BACKGROUND, store.search.fusion). `building` says how far the first embedding of the
    memories has got while it runs (the scores are empty then: search answers from BM25)."""

    model: str
    scores: dict[Key, float]
    anchor: float = 0.0
    building: str | None = None
    spread: float = 0.0
    """The standard deviation of the query's cosines with BACKGROUND: how far above `anchor` a
    cosine must be to mean something for this query (store.search.confidence)."""


class VectorIndex:
    """Window vectors of every memory, by content hash, and the model that made them.

    Embedding that fits INLINE_SECONDS happens in the call that needs it; a larger backlog is
    embedded in batches by `build`, on a server's warm-up thread or on a daemon thread a search
    starts, and vectors.bin is saved every SAVE_SECONDS meanwhile, so a process that exits
    (a CLI command) keeps what it embedded and the next one goes on from there."""

    def __init__(
        self,
        cache: Path | None,
        *,
        writable: bool = True,
        key: Callable[[], bytes] = lambda: b"",
        notice: Callable[[str, str], None] = lambda code, message: None,
        one_shot: bool = False,
    ) -> None:
        """`one_shot`: a process that answers and exits (a CLI read) never starts a build it
        could not finish: its searches answer from BM25 and say how far the build has got, and
        `build` (a server's warm-up, `engram index`) does the embedding."""
        self._one_shot = one_shot
        self._file = DerivedFile(cache, writable=writable, key=key, notice=notice)
        self._lock = threading.Lock()
        self._model: Model | None = None
        self._background: Matrix | None = None
        self._last_query: tuple[str, str, Any] = ("", "", None)
        """(model fingerprint, query, its embedding) of the last search."""
        self._model_folder: str | None = None
        self._failure: str | None = None
        self._known: dict[str, Rows] = {}
        """Vectors not in the matrix yet, by content hash: read from vectors.bin or embedded by
        the builder, until the sync that completes takes them."""
        self._loaded_file = False
        self._synced: object = None
        self._generation = 0
        """Bumped when the model changes: a builder of the old model stops and its work is dropped."""
        self._backlog: dict[str, list[str]] = {}
        """Windows still to embed, by content hash, for the memories of `_plan`."""
        self._waiting: dict[str, int] = {}
        """How many memories wait for each backlog hash."""
        self._plan: tuple[object, Callable[[], Mapping[Key, Memory]]] | None = None
        self._total = 0
        self._building = False
        """True while `build` runs (on whichever thread)."""
        self._saved_at = 0.0
        self._stop = threading.Event()
        """Set by `stop`: the builder ends after the batch under way."""
        self._builder: threading.Thread | None = None
        self._reset()

    def _reset(self) -> None:
        """No memory embedded: the window matrix and its bookkeeping, empty."""
        self._keys: list[Key] = []
        """Memory keys in row-block order (kept ones first, then what each sync added)."""
        self._hash_of: dict[Key, str] = {}
        self._memory_of: Mapping[Key, Memory] = {}
        """The mapping the last sync saw: a memory still the same object is unchanged."""
        self._row_of: dict[Key, int] = {}
        self._sizes: Any = np.zeros(0, dtype=np.int64)
        self._starts: Any = np.zeros(0, dtype=np.int64)
        self._matrix: Matrix | None = None

    # --- model -----------------------------------------------------------------------------
    def _ensure_model(self, folder: str) -> Model | None:
        if self._model_folder != folder:
            # another model: none of the vectors in hand or on disk (if made by the old one) hold
            self._model_folder, self._model, self._failure = folder, None, None
            self._synced, self._known, self._loaded_file = None, {}, False
            self._generation += 1
            self._backlog, self._waiting, self._plan = {}, {}, None
            self._reset()
            try:
                model = load_model(folder, quick=self._one_shot)
                self._background = None  # from vectors.bin when it has them, else embedded at first need
                self._model = model
            except ModelUnavailable as exc:
                self._failure = str(exc)
                log.warning("vector signal off: %s", exc)
        return self._model

    def problem(self) -> str | None:
        """Why the configured model could not be loaded (None when it was, or was not tried)."""
        return self._failure

    def _counts(self) -> tuple[int, int] | None:
        """(memories embedded, memories) while a planned build is not in the matrix yet (every
        vector may be in hand, the builder about to sync), else None."""
        if self._plan is None or self._plan[0] == self._synced:
            return None
        waiting = sum(self._waiting.get(h, 1) for h in list(self._backlog))
        return max(0, self._total - waiting), self._total

    def progress(self) -> str | None:
        """How far the build has got while memories wait for their vectors (None when none do)."""
        counts = self._counts()
        return None if counts is None else progress(*counts)

    def state(self) -> tuple[str, int, int] | None:
        """(model name, memories embedded, memories) as the last sync saw them, or None before one."""
        model = self._model
        if model is None:
            return None
        counts = self._counts()
        return (model.name, *counts) if counts is not None else (model.name, len(self._keys), len(self._keys))

    # --- embeddings ------------------------------------------------------------------------
    def _read_file(self, model: Model, memories: int) -> None:
        """vectors.bin's vectors, if it is sealed for this user and model. A file larger than
        these `memories` could need (FILE_BYTES_BASE plus FILE_BYTES_PER_MEMORY each) is not
        read at all: a clone can ship gigabytes that compress to nothing."""
        if self._loaded_file:
            return
        self._loaded_file = True
        limit = FILE_BYTES_BASE + memories * FILE_BYTES_PER_MEMORY
        known = self._file.load(lambda path, key: vector_rows.decode(read_regular(path, limit), model, key))
        if known is not None:
            self._known = known
            if (background := self._known.pop(_BACKGROUND_KEY, None)) is not None:
                self._background = np.asarray(background, dtype=np.float32)

    def _rows(self, key: Key) -> Matrix:
        assert self._matrix is not None
        start = int(self._starts[self._row_of[key]])
        return self._matrix[start : start + int(self._sizes[self._row_of[key]])]

    def _sync(
        self,
        model: Model,
        source: Callable[[], Mapping[Key, Memory]],
        version: object,
        budget: float | None = INLINE_SECONDS,
    ) -> bool:
        """Make the matrix hold exactly these memories' windows, touching only what changed:
        an edited memory whose window count is unchanged is overwritten in place, new ones are
        appended, and removals cost one masked copy. Vectors come from vectors.bin or the
        builder when they have the content hash, else they are embedded here if that is
        predicted to take at most `budget` seconds (None: whatever it takes). False when it
        would take longer: the rest is left to `build` as the backlog, the matrix unchanged."""
        if self._synced == version:
            return True
        if self._building and self._plan is not None and self._plan[0] == version:
            return False  # the builder is on it
        memories = source()
        self._read_file(model, len(memories))
        previous, hash_of = self._memory_of, self._hash_of
        changed = [k for k, m in memories.items() if previous.get(k) is not m and hash_of.get(k) != m.hash]
        fresh = [k for k in changed if k not in hash_of]
        gone = len(self._keys) - (len(memories) - len(fresh))
        by_hash: dict[str, Rows] = {}
        todo: dict[str, list[str]] = {}
        waiting: dict[str, int] = {}
        for key in changed:
            content_hash = memories[key].hash
            if content_hash in todo:
                waiting[content_hash] += 1
            elif content_hash not in by_hash:
                if content_hash in self._known:
                    by_hash[content_hash] = self._known[content_hash]
                else:
                    todo[content_hash] = windows(memories[key], model.window_words)
                    waiting[content_hash] = 1
        texts = [text for parts in todo.values() for text in parts]
        if texts and budget is not None and model.pace.predict(texts) > budget:
            # shortest first: a build's batches then hold windows of like length (little padding)
            todo = dict(sorted(todo.items(), key=lambda item: sum(len(t) for t in item[1])))
            self._backlog, self._waiting, self._total = todo, waiting, len(memories)
            self._plan = (version, source)
            return False
        if texts:
            vectors = model.embed(texts)
            at = 0
            for content_hash, parts in todo.items():
                by_hash[content_hash] = vectors[at : at + len(parts)]
                at += len(parts)
        drop = {k for k in self._keys if k not in memories} if gone else set()
        append = list(fresh)
        for key in changed:
            if key in hash_of:
                block = by_hash[memories[key].hash]
                row = self._row_of[key]
                if len(block) == int(self._sizes[row]):
                    assert self._matrix is not None
                    start = int(self._starts[row])
                    self._matrix[start : start + len(block)] = block
                else:  # more or fewer windows than before: moved to the end
                    drop.add(key)
                    append.append(key)
            hash_of[key] = memories[key].hash
        if drop:
            mask = np.array([k not in drop for k in self._keys], dtype=bool)
            assert self._matrix is not None
            self._matrix = self._matrix[np.repeat(mask, self._sizes)]
            self._sizes = self._sizes[mask]
            self._keys = [k for k, ok in zip(self._keys, mask.tolist(), strict=True) if ok]
            for key in drop:
                hash_of.pop(key, None)
            for key in append:
                hash_of[key] = memories[key].hash
            self._row_of = {k: n for n, k in enumerate(self._keys)}
        if append:
            append.sort()
            blocks = [by_hash[memories[k].hash] for k in append]
            kept = [self._matrix] if self._matrix is not None else []
            self._matrix = np.concatenate([*kept, *blocks], dtype=np.float32)
            self._sizes = np.concatenate([self._sizes, np.array([len(b) for b in blocks], dtype=np.int64)])
            for key in append:
                self._row_of[key] = len(self._keys)
                self._keys.append(key)
        if drop or append:
            self._starts = np.cumsum(self._sizes) - self._sizes
        if self._matrix is None:
            self._matrix = np.zeros((0, model.dim), dtype=np.float32)
        # the file changes when something was embedded or dropped, or it held what is gone now
        if texts or drop or (self._known and any(h not in by_hash for h in self._known)):
            self._file.dirty = True
        self._memory_of = memories
        self._known = {}
        self._backlog, self._waiting, self._plan = {}, {}, None
        self._synced = version
        return True

    def warm(self, folder: str, memories: Callable[[], Mapping[Key, Memory]], version: object) -> bool:
        """Load the model and embed what fits the inline budget (a server's warm-up thread);
        True when a backlog is left for `build`."""
        with self._lock:
            model = self._ensure_model(folder)
            pending = model is not None and not self._sync(model, memories, version)
        if not pending:
            self.save()
        return pending

    def build(self, told: Callable[[int, int], None] = lambda done, total: None) -> None:
        """Embed the backlog in batches on this thread, handing each batch's vectors in and
        saving vectors.bin every SAVE_SECONDS, then make the matrix whole; returns when no
        memory waits (or the model changed). `told(done, total)` after each batch (memories)."""
        with self._lock:
            model, generation = self._model, self._generation
            if model is None or self._building:
                return
            self._building = True
            self._builder = threading.current_thread()
        _BUILDING.add(self)
        try:
            self._build(model, generation, told)
        except Exception:  # a model that fails mid-build: searches stay on BM25, the log says why
            log.exception("vector build stopped")
        finally:
            with self._lock:
                if self._generation == generation:
                    self._building = False
                self._builder = None
            _BUILDING.discard(self)
            self.save()

    def stop(self, timeout: float = 5.0) -> None:
        """End a build under way after its current batch, with what it embedded saved (a
        process on its way out: onnxruntime must not be mid-run when the interpreter goes, and
        the next process goes on from the saved progress). A later search starts it again."""
        builder = self._builder
        if builder is None or builder is threading.current_thread():
            return
        self._stop.set()
        builder.join(timeout)
        self._stop.clear()

    def _build(self, model: Model, generation: int, told: Callable[[int, int], None]) -> None:
        self._saved_at = time.monotonic()
        while not self._stop.is_set():
            if (counts := self._counts()) is not None:
                told(*counts)
            with self._lock:
                if generation != self._generation:
                    return
                batch = self._next_batch(model)
                if not batch:
                    if self._plan is not None:  # every vector is in hand: the matrix takes them
                        version, source = self._plan
                        self._sync(model, source, version, budget=None)
                    return
            vectors = model.embed([text for _, parts in batch for text in parts], bulk=True)
            with self._lock:
                if generation != self._generation:
                    return
                at = 0
                for content_hash, parts in batch:
                    self._known[content_hash] = vectors[at : at + len(parts)]
                    self._backlog.pop(content_hash, None)
                    at += len(parts)
                self._file.dirty = True
            if time.monotonic() - self._saved_at >= SAVE_SECONDS:
                self.save()
                self._saved_at = time.monotonic()

    def _next_batch(self, model: Model) -> list[tuple[str, list[str]]]:
        """About BATCH_SECONDS of the backlog (at least one memory), in the backlog's order."""
        batch: list[tuple[str, list[str]]] = []
        seconds = 0.0
        for content_hash, parts in self._backlog.items():
            batch.append((content_hash, parts))
            seconds += model.pace.predict(parts)
            if seconds >= BATCH_SECONDS:
                break
        return batch

    def _start_builder(self) -> None:
        """`build` on a daemon thread: a process that exits does not wait for it."""
        if not self._building:
            threading.Thread(target=self.build, name="engram-vectors", daemon=True).start()

    def scores(
        self,
        query: str,
        folder: str,
        memories: Callable[[], Mapping[Key, Memory]],
        version: object,
        *,
        want: Iterable[Key] = (),
        top: int | None = None,
    ) -> Scored | None:
        """Cosine of the query with each memory's best window, for the keys in `want` and the
        `top` best (every memory when `top` is None); None when the model cannot be loaded.
        `memories` is called only when `version` differs from the last call's. While memories
        wait for their first vectors, no scores and the build's progress (a builder is started
        when none runs)."""
        with self._lock:
            model = self._ensure_model(folder)
            if model is None:
                return None
            if not self._sync(model, memories, version):
                building = self.progress()
                if not self._one_shot:
                    self._start_builder()
                return Scored(model.name, {}, building=building)
            keys, matrix, row_of = self._keys, self._matrix, self._row_of
            if matrix is None or not keys or not len(matrix):
                return Scored(model.name, {})
            query_vector = self._query_vector(model, query)
            if not query_vector.any():
                return Scored(model.name, {})  # no known token: meaning says nothing
            # einsum, not BLAS: no thread pool spinning on a busy machine, same result
            best = np.maximum.reduceat(np.einsum("ij,j->i", matrix, query_vector), self._starts)
            if self._background is None:
                self._background, self._file.dirty = model.embed(list(BACKGROUND)), True
            unrelated = np.einsum("ij,j->i", self._background, query_vector)
            anchor, spread = round(float(unrelated.mean()), 6), round(float(unrelated.std()), 6)
        if top is None or top >= len(keys):
            chosen: Iterable[int] = range(len(keys))
        else:  # the `top` best and every memory tied with the last: the same set in any row order
            kth = np.partition(best, len(best) - top)[len(best) - top]
            chosen = np.flatnonzero(best >= kth).tolist()
        found = {keys[i]: round(float(best[i]), 6) for i in chosen}
        for key in want:
            if key not in found and (at := row_of.get(key)) is not None:
                found[key] = round(float(best[at]), 6)
        return Scored(model.name, found, anchor, spread=spread)

    def _query_vector(self, model: Model, query: str) -> Matrix:
        """The query's embedding, kept for the next call: a search that widens its look (its
        filters left too few of the best) asks again for the same query."""
        if self._last_query[:2] != (model.fingerprint, query):
            self._last_query = (model.fingerprint, query, model.embed([query])[0])
        vector: Matrix = self._last_query[2]
        return vector

    def save(self) -> None:
        """Write `.engram/vectors.bin` (derived data; skipped when unchanged or read-only): the
        matrix's vectors and those the builder has embedded so far."""
        if not self._file.may_write():
            return
        if not self._lock.acquire(timeout=2.0):
            return  # still embedding (a server shutting down): the next process finishes the job
        try:
            if not self._file.dirty or self._model is None:
                return
            by_hash = {**self._known, **{self._hash_of[k]: self._rows(k) for k in self._keys}}
            if self._background is not None:
                by_hash[_BACKGROUND_KEY] = self._background
            data = vector_rows.encode(by_hash, self._model, self._file.key())
        finally:
            self._lock.release()
        self._file.write(data)

    def neighbours(
        self,
        folder: str,
        memories: Callable[[], Mapping[Key, Memory]],
        version: object,
        groups: Iterable[Iterable[Key]],
        top: int,
    ) -> tuple[str, list[tuple[Key, Key, float]]] | None:
        """Each memory's `top` nearest of its own group by meaning, as (key, other, cosine of
        their closest windows), each pair once (key < other); None when the model cannot be
        loaded or memories wait for their first vectors (as `scores`). The group's windows are
        copied under the lock and compared outside it, a block of rows at a time against all
        of them, so a search meanwhile does not wait and memory stays bounded."""
        with self._lock:
            model = self._ensure_model(folder)
            if model is None:
                return None
            if not self._sync(model, memories, version):
                if not self._one_shot:
                    self._start_builder()
                return None
            copied = []
            for group in groups:
                keys = sorted({k for k in group if k in self._row_of})
                if len(keys) > 1:
                    blocks = [self._rows(k) for k in keys]
                    sizes = np.array([len(b) for b in blocks], dtype=np.int64)
                    copied.append((keys, np.concatenate(blocks, dtype=np.float32), sizes))
        found = vector_rows.closest_pairs(copied, top)
        assert model is not None
        return model.name, [(a, b, cosine) for (a, b), cosine in sorted(found.items())]


_BUILDING: weakref.WeakSet[VectorIndex] = weakref.WeakSet()
"""Indexes whose build is under way, stopped at exit (a daemon thread inside onnxruntime when
the interpreter finalises aborts the process)."""


@atexit.register
def _stop_builds() -> None:
    for index in list(_BUILDING):
        index.stop()


__all__ = ["Key", "Scored", "VectorIndex"]
