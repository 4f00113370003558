"""The optional vector signal (extra `vectors`, SPEC §3.1): a local static-embedding model.

The model is a token-embedding table (safetensors) plus a `tokenizers` tokenizer; a text's
vector is the mean of its tokens' rows, compared by cosine. By default it is WordLlama's
`l2_supercat_256`, whose files ship inside the `wordllama` wheel. They are read directly: the
`wordllama` package is never imported (its loader looks for the tokenizer in a `tokenizer/`
folder that does not exist and then downloads it, and its import configures logging and pulls
in pydantic and requests), so nothing here opens a socket. `search.vector_model` (user config)
names another local folder instead, e.g. a model2vec model (`model.safetensors` +
`tokenizer.json`).

Each memory is embedded in windows of at most `WINDOW_WORDS` words of its body, each prefixed
with its title and tags; a memory scores by its best window. Window vectors are kept per
content hash in `.engram/vectors.bin` (derived, gitignored), refreshed incrementally: only new
or changed memories are embedded, vectors no memory uses are dropped; the file is rebuilt when
unreadable, when its tag does not match, or when the model changes.

Loading is lazy: this module imports numpy and tokenizers at its top, and the
Store imports it only when the signal is on and first used (a server does that on its warm-up
thread, after the handshake); `store.search.vector_extra` tells whether it can run. While that
thread is still loading the model and embeddings, a search answers from BM25 alone and its
backends say so (store.store.Store.warm); once they are in, every search fuses both signals. A
process without a warm-up (the CLI, a test's Store) loads them at its first search and waits.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np
import orjson
from tokenizers import Tokenizer

from store.errors import ModelUnavailable, Untrusted
from store.files import sealed
from store.files.fsutil import read_regular, write_atomic
from store.files.memory import Memory, embedded_prefix, without_provenance
from store.search.vector_build import (
    BACKGROUND,
    BATCH_SECONDS,
    INLINE_SECONDS,
    SAVE_SECONDS,
    Pace,
    progress,
)
from store.search.vector_extra import (
    FILE_BYTES_BASE,
    FILE_BYTES_PER_MEMORY,
    MINILM,
    WORDLLAMA,
    available,
    disabled_by_env,
    extra_installed,
    install_hint,
    minilm_installed,
    model_kind,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Rows = npt.NDArray[np.float16] | npt.NDArray[np.float32]
    """A memory's window vectors: float32 when just embedded, float16 as vectors.bin holds them."""

log = logging.getLogger("engram.store")

Key = tuple[str, str, str]
"""(scope, tier, id), as in store.search."""

WINDOW_WORDS: Final = 200
"""Body words per window (the title and tags are added to every window)."""
BUNDLED_CONFIG: Final = "l2_supercat"
BUNDLED_DIM: Final = 256
_FORMAT: Final = f"windows={WINDOW_WORDS};prefix=title+tags;provenance=out;pool=mean-words;dtype=float16"


class Model(Protocol):
    """What the index needs of a model (StaticModel here, store.search.onnx_model.OnnxModel)."""

    name: str
    fingerprint: str
    """Says which model, files and windowing made a vector: vectors.bin is kept only under it."""
    dim: int
    window_words: int
    pace: Pace

    def embed(self, texts: list[str], *, bulk: bool = False) -> Matrix:
        """Unit float32 rows, one per text (zero rows for an empty text); `bulk`: a build's
        batch, which may run on fewer threads than a query."""
        ...


def bundled_files() -> tuple[Path, Path]:
    """(weights, tokenizer) inside the installed `wordllama` wheel, found without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"the vectors extra is not fully installed: {install_hint(WORDLLAMA)}")
    root = Path(next(iter(spec.submodule_search_locations)))
    weights = root / "weights" / f"{BUNDLED_CONFIG}_{BUNDLED_DIM}.safetensors"
    tokenizer = root / "tokenizers" / f"{BUNDLED_CONFIG}_tokenizer_config.json"
    for path in (weights, tokenizer):
        if not path.is_file():
            raise ModelUnavailable(
                f"the wordllama wheel has no {path.name}: reinstall it ({install_hint(WORDLLAMA)})"
            )
    return weights, tokenizer


def folder_files(folder: str) -> tuple[Path, Path]:
    """(weights, tokenizer) of a local model folder named by `search.vector_model`."""
    path = Path(folder)
    where = "search.vector_model (in $ENGRAM_HOME/config.json)"
    if not path.is_absolute():
        raise ModelUnavailable(f"{where} is not an absolute path: give the model folder's full path")
    if not path.is_dir():
        raise ModelUnavailable(f"{where} is not a folder: fix the path or remove the key")
    weights = path / "model.safetensors"
    if not weights.is_file():
        found = sorted(path.glob("*.safetensors"))
        if len(found) != 1:
            raise ModelUnavailable(f"{where} holds no single *.safetensors file (model.safetensors expected)")
        weights = found[0]
    tokenizer = path / "tokenizer.json"
    if not tokenizer.is_file():
        raise ModelUnavailable(f"{where} holds no tokenizer.json")
    return weights, tokenizer


class StaticModel:
    """Mean-pooled static token embeddings; `embed` gives unit rows (zero rows for empty text)."""

    def __init__(self, name: str, weights: Path, tokenizer: Path, digest: str | None = None) -> None:
        from safetensors.numpy import load_file  # seam: safetensors, for a static model (not MiniLM's)

        try:
            tensors = load_file(str(weights))
            self._tokenizer: Any = Tokenizer.from_file(str(tokenizer))
        except Exception as exc:  # the libraries raise their own types for unreadable files
            detail = str(exc).replace(str(weights.parent), "…")
            raise ModelUnavailable(
                f"model files {weights.name}, {tokenizer.name} unreadable ({detail}): reinstall or replace them"
            ) from exc
        table = _embedding_table(tensors)
        if table is None:
            raise ModelUnavailable(f"{weights.name} holds no 2-D embedding table")
        # float16 like the bundled file (half the memory of float32); rows are widened when pooled
        self._table: Any = np.ascontiguousarray(table, dtype=np.float16)
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self._counted: dict[int, bool] = {}
        """Token id → whether it counts towards a text's vector, worked out when first seen
        (the whole vocabulary up front cost ~65 ms of every start)."""
        if digest is None:  # a model folder of the user's: its bytes say which model it is
            content = hashlib.sha256(weights.read_bytes())
            content.update(tokenizer.read_bytes())
            digest = content.hexdigest()
        self.name = name
        self.fingerprint = f"{name};{digest};{_FORMAT}"
        self.dim = int(self._table.shape[1])
        self.window_words = WINDOW_WORDS
        self.pace = Pace(5e-7)

    def embed(self, texts: list[str], *, bulk: bool = False) -> Matrix:
        return self.pace.timed(texts, lambda: self._embed(texts))

    def _embed(self, texts: list[str]) -> Matrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows = len(self._table)
        for i, encoding in enumerate(self._tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids = [t for t in encoding.ids if 0 <= t < rows and self._counts(t)]
            if ids:
                vector = self._table[ids].astype(np.float32).mean(axis=0)
                norm = float(np.linalg.norm(vector))
                if norm > 0:
                    out[i] = vector / norm
        # Stored as float16: embedding now or reading the file later gives the same numbers.
        return out.astype(np.float16).astype(np.float32)

    def _counts(self, token_id: int) -> bool:
        """Whether a token counts: not unknown or padding, and holding a letter or digit
        (punctuation and whitespace pieces carry no meaning of their own)."""
        counted = self._counted.get(token_id)
        if counted is None:
            token = self._tokenizer.id_to_token(token_id) or ""
            counted = token not in _SPECIAL and any(c.isalnum() for c in token)
            self._counted[token_id] = counted
        return counted


_SPECIAL: Final = frozenset({"<unk>", "[UNK]", "<pad>", "[PAD]"})


def _embedding_table(tensors: dict[str, Any]) -> Any:
    for name in ("embedding.weight", "embeddings"):
        if name in tensors and tensors[name].ndim == 2:
            return tensors[name]
    tables = [t for t in tensors.values() if t.ndim == 2]
    return tables[0] if len(tables) == 1 else None


def load_model(folder: str, *, quick: bool = False) -> Model:
    """The model `search.vector_model` names: unset, MiniLM when its extra is installed, else
    WordLlama; `minilm` or `wordllama` by name; or a local folder, an ONNX model when it holds
    model.onnx, else a static one. `quick`: for a one-shot process (store.search.onnx_model)."""
    onnx = minilm_installed() if not folder else model_kind(folder) == MINILM
    if not onnx and folder and folder != WORDLLAMA:
        weights, tokenizer = folder_files(folder)
        return StaticModel(Path(folder).name, weights, tokenizer)
    if onnx:
        if not minilm_installed(onnx_only=folder not in ("", MINILM)):
            raise ModelUnavailable(f"search.vector_model names {folder}: {install_hint(MINILM)}")
        from store.search import onnx_model  # seam: onnxruntime, for an ONNX model

        return (
            onnx_model.load_minilm(quick=quick)
            if folder in ("", MINILM)
            else onnx_model.load_onnx_folder(Path(folder), quick=quick)
        )
    weights, tokenizer = bundled_files()
    name = f"wordllama-{BUNDLED_CONFIG}_{BUNDLED_DIM}"
    return StaticModel(name, weights, tokenizer, _recorded_digest(weights, tokenizer))


def _recorded_digest(*files: Path) -> str | None:
    """The bundled files' sha256 as the wheel's RECORD lists them (what the installer checked),
    instead of hashing 18 MB at every start (~45 ms); None when the RECORD does not list both."""
    root = files[0].parents[1]  # …/site-packages/wordllama/weights/x → …/site-packages
    site = root.parent
    wanted = {path.relative_to(site).as_posix(): "" for path in files}
    for record in site.glob("wordllama-*.dist-info/RECORD"):
        try:
            lines = record.read_text("utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return None
        for line in lines:
            name, _, rest = line.partition(",")
            if name in wanted:
                wanted[name] = rest.partition(",")[0]
    if not all(digest.startswith("sha256=") for digest in wanted.values()):
        return None
    return "record:" + ";".join(wanted[name] for name in sorted(wanted))


def windows(memory: Memory, words: int = WINDOW_WORDS) -> list[str]:
    """The texts a memory is embedded as: its body in runs of at most `words` words, each
    prefixed with the title and tags (one window of title and tags alone for an empty body). An
    imported memory's closing provenance line is left out: it is where the text came from, not
    what it means (store.files.memory.without_provenance)."""
    prefix = embedded_prefix(memory.title, memory.tags)
    body = without_provenance(memory.body).split()
    runs = [" ".join(body[at : at + words]) for at in range(0, len(body), words)] or [""]
    return [f"{prefix}\n{run}" if run else prefix for run in runs]


_BACKGROUND_KEY: Final = (
    "background:" + hashlib.sha256("\n".join(BACKGROUND).encode("utf-8")).hexdigest()[:16]
)
"""vectors.bin's entry for the BACKGROUND sentences' vectors: a process that reads the file
does not embed them again (24 model runs, most of a CLI read's time)."""

_KIND: Final = "vectors"
"""The seal's kind (store.files.sealed): an HMAC keyed by the per-user secret, so a torn, edited, or
planted file (one that arrived with a clone) is discarded and rebuilt."""


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
        self._key = key
        self._notice = notice
        self._said_unwritable = False
        self._lock = threading.Lock()
        self._cache = cache
        self._writable = writable
        self._model: Model | None = None
        self._background: Matrix | None = None
        self._model_folder: str | None = None
        self._failure: str | None = None
        self._known: dict[str, Rows] = {}
        """Vectors not in the matrix yet, by content hash: read from vectors.bin or embedded by
        the builder, until the sync that completes takes them."""
        self._loaded_file = False
        self._dirty = False
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
        if self._loaded_file or self._cache is None:
            return
        self._loaded_file = True
        limit = FILE_BYTES_BASE + memories * FILE_BYTES_PER_MEMORY
        try:
            data = read_regular(self._cache, limit)
        except FileNotFoundError:
            return
        except OSError as exc:
            self._dirty = True  # replaced at the next save (a folder in its place stays: said once)
            log.warning("vectors file %s unreadable (%s); rebuilding", self._cache.name, exc)
            self._notice("ENGRAM_UNTRUSTED", f".engram/{self._cache.name} not read ({exc}); rebuilt")
            return
        try:
            self._known = _decode(data, model, self._key())
            if (background := self._known.pop(_BACKGROUND_KEY, None)) is not None:
                self._background = np.asarray(background, dtype=np.float32)
        except Untrusted as exc:
            self._dirty = True
            if exc.stale:  # an earlier engram's layout: derived data, rebuilt quietly
                log.info("vectors file %s from an earlier engram; rebuilding", self._cache.name)
            else:
                self._notice("ENGRAM_UNTRUSTED", f".engram/{self._cache.name} discarded ({exc}); rebuilt")
        except ValueError as exc:
            log.warning("vectors file %s discarded (%s); rebuilding", self._cache.name, exc)
            self._notice("ENGRAM_UNTRUSTED", f".engram/{self._cache.name} discarded ({exc}); rebuilt")
            self._dirty = True

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
            self._dirty = True
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
                self._dirty = True
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
            query_vector = model.embed([query])[0]
            if not query_vector.any():
                return Scored(model.name, {})  # no known token: meaning says nothing
            # einsum, not BLAS: no thread pool spinning on a busy machine, same result
            best = np.maximum.reduceat(np.einsum("ij,j->i", matrix, query_vector), self._starts)
            if self._background is None:
                self._background, self._dirty = model.embed(list(BACKGROUND)), True
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

    def save(self) -> None:
        """Write `.engram/vectors.bin` (derived data; skipped when unchanged or read-only): the
        matrix's vectors and those the builder has embedded so far."""
        if self._cache is None or not self._writable or not self._cache.parent.is_dir():
            return
        if not self._lock.acquire(timeout=2.0):
            return  # still embedding (a server shutting down): the next process finishes the job
        try:
            if not self._dirty or self._model is None:
                return
            by_hash = {**self._known, **{self._hash_of[k]: self._rows(k) for k in self._keys}}
            if self._background is not None:
                by_hash[_BACKGROUND_KEY] = self._background
            data = _encode(by_hash, self._model, self._key())
            self._dirty = False
        finally:
            self._lock.release()
        try:
            write_atomic(self._cache, data)
        except OSError as exc:
            if not self._said_unwritable:  # once: a folder or a read-only .engram stays in the way
                self._said_unwritable = True
                log.warning(
                    "vectors file %s not written (%s): remove what is in its place", self._cache.name, exc
                )
            self._dirty = True

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
        found: dict[tuple[Key, Key], float] = {}
        for keys, rows, sizes in copied:
            starts = np.cumsum(sizes) - sizes
            wanted = min(top, len(keys) - 1)
            first = 0
            while first < len(keys):  # memories first..last-1, about _NEIGHBOUR_ROWS windows
                last = int(np.searchsorted(np.cumsum(sizes[first:]), _NEIGHBOUR_ROWS, side="right")) + first
                last = max(last, first + 1)
                low, high = int(starts[first]), int(starts[last - 1] + sizes[last - 1])
                cosines = np.maximum.reduceat(rows[low:high] @ rows.T, starts, axis=1)
                best = np.maximum.reduceat(cosines, starts[first:last] - low, axis=0)
                best[np.arange(last - first), np.arange(first, last)] = -np.inf  # not itself
                nearest = np.argpartition(-best, wanted - 1, axis=1)[:, :wanted]
                for n, others in enumerate(nearest.tolist()):
                    for other in others:
                        a, b = sorted((keys[first + n], keys[other]))
                        found[(a, b)] = round(float(best[n, other]), 6)
                first = last
        assert model is not None
        return model.name, [(a, b, cosine) for (a, b), cosine in sorted(found.items())]


_NEIGHBOUR_ROWS: Final = 512
"""Windows compared with all of a group's at once by `neighbours` (512 × 15,000 float32 cosines:
31 MB)."""

_BUILDING: weakref.WeakSet[VectorIndex] = weakref.WeakSet()
"""Indexes whose build is under way, stopped at exit (a daemon thread inside onnxruntime when
the interpreter finalises aborts the process)."""


@atexit.register
def _stop_builds() -> None:
    for index in list(_BUILDING):
        index.stop()


def _encode(by_hash: Mapping[str, Rows], model: Model, key: bytes) -> bytes:
    """Sealed (store.files.sealed): header length, JSON header, float16 rows."""
    hashes = sorted(by_hash)
    header = orjson.dumps(
        {"model": model.fingerprint, "dim": model.dim, "entries": [[h, len(by_hash[h])] for h in hashes]}
    )
    rows = [by_hash[h].astype(np.float16).tobytes() for h in hashes]
    return sealed.seal_binary(key, _KIND, b"".join([len(header).to_bytes(8, "little"), header, *rows]))


def _decode(data: bytes, model: Model, key: bytes) -> dict[str, Rows]:
    """The inverse of `_encode`: Untrusted for a file this user's engram did not seal (stale
    for an earlier layout), ValueError for one that is torn or from another model."""
    body = sealed.unseal_binary(key, _KIND, data)  # a view: no copy
    size = int.from_bytes(body[:8], "little")
    try:
        header = orjson.loads(body[8 : 8 + size])
        if header["model"] != model.fingerprint or header["dim"] != model.dim:
            raise ValueError("made by another model")
        entries = [(str(h), int(n)) for h, n in header["entries"]]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"unreadable header ({exc})") from exc
    matrix = np.frombuffer(body, dtype=np.float16, offset=8 + size).reshape(-1, model.dim)
    if sum(n for _, n in entries) != len(matrix) or (len(body) - 8 - size) % (2 * model.dim):
        raise ValueError("sizes do not add up")
    out: dict[str, Rows] = {}
    row = 0
    for content_hash, count in entries:  # float16 views of the file: widened once, into the matrix
        out[content_hash] = matrix[row : row + count]
        row += count
    return out


__all__ = [
    "Key",
    "Model",
    "ModelUnavailable",
    "Scored",
    "StaticModel",
    "VectorIndex",
    "WINDOW_WORDS",
    "disabled_by_env",
    "available",
    "extra_installed",
    "load_model",
    "windows",
]
