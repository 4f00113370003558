"""Whether the optional vector signal can run, told without importing it (store.search.vectors
imports numpy, tokenizers and safetensors, ~150 ms: only a store whose signal is on loads it)."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Mapping
from typing import Final

_OFF: Final = ("0", "false", "no", "off")


@functools.cache
def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def extra_installed() -> bool:
    """Whether the `vectors` extra is installed (checked without importing anything)."""
    return all(_installed(name) for name in ("numpy", "tokenizers", "safetensors", "wordllama"))


def available(folder: str) -> bool:
    """Whether the signal can run: the extra, or (for a configured model folder) the libraries
    that read it. Libraries installed for something else, without wordllama, say nothing."""
    if not folder:
        return extra_installed()
    return all(_installed(name) for name in ("numpy", "tokenizers", "safetensors"))


def disabled_by_env(env: Mapping[str, str]) -> bool:
    """`ENGRAM_VECTORS=0` (or false/no/off) turns the signal off, whatever the config says."""
    return env.get("ENGRAM_VECTORS", "").strip().lower() in _OFF
