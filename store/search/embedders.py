"""The vector signal's models (extra `vectors`, SPEC §3.1) and the texts a memory is embedded as.

The default model is a token-embedding table (safetensors) plus a `tokenizers` tokenizer: a
text's vector is the mean of its tokens' rows, compared by cosine. It is WordLlama's
`l2_supercat_256`, whose files ship inside the `wordllama` wheel and are read directly: the
`wordllama` package is never imported (its loader would download a tokenizer, and its import
configures logging and pulls in pydantic and requests), so nothing here opens a socket.
`search.vector_model` names another local folder instead (a model2vec model, or MiniLM's ONNX
encoder, store.search.onnx_model). Each memory is embedded in windows of at most
`WINDOW_WORDS` words of its body, each prefixed with its title and tags; a memory scores by its
best window (store.search.vectors).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np
from tokenizers import Tokenizer

from store.errors import ModelUnavailable
from store.files.memory import Memory, embedded_prefix, without_provenance
from store.search.vector_build import (
    Pace,
)
from store.search.vector_extra import (
    MINILM,
    WORDLLAMA,
    install_hint,
    minilm_installed,
    model_kind,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Rows = npt.NDArray[np.float16] | npt.NDArray[np.float32]
    """A memory's window vectors: float32 when just embedded, float16 as vectors.bin holds them."""


WINDOW_WORDS: Final = 200
"""Body words per window (the title and tags are added to every window)."""
_FORMAT: Final = f"windows={WINDOW_WORDS};prefix=title+tags;provenance=out;pool=mean-words;dtype=float16"
BUNDLED_CONFIG: Final = "l2_supercat"
BUNDLED_DIM: Final = 256


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
        (the whole vocabulary up front would slow every start)."""
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
    instead of hashing 18 MB at every start; None when the RECORD does not list both."""
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
