"""What the store suites share beyond tests/conftest.py.

Imported before the root conftest.py checks the environment (when a path below tests/store is
named): it imports nothing of the product at module level, so a Python without engram's
dependencies still gets that check's one line instead of an import error.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from store.store import Store

_VECTOR_MODULES = [
    "test_vector_build.py",
    "test_vectors.py",
    "test_vectors_minilm.py",
    "test_vectors_warming.py",
    "test_verdicts_by_meaning.py",
]
collect_ignore = [
    *([] if importlib.util.find_spec("numpy") else ["test_bm25.py"]),
    *(
        []
        if importlib.util.find_spec("numpy") and importlib.util.find_spec("tokenizers")
        else _VECTOR_MODULES
    ),
]
"""The modules that import the vector signal (numpy, tokenizers: the vectors and minilm extras)
or numpy: with `pip install '.[test]'` alone they are not collected (`make test` installs every
extra, so CI runs them all)."""


@pytest.fixture
def store(workspace: Path) -> Store:
    """A `Store` on the workspace copy whose clock stands at `tests.support.proposals.NOW`."""
    from store.store import Store  # deferred: see the module docstring
    from tests.support.proposals import fixed

    return Store(workspace, clock=fixed())
