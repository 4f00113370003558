"""What the store suites share beyond tests/conftest.py.

Imported before the root conftest.py checks the environment (when a path below tests/store is
named): it imports nothing of the product at module level, so a Python without engram's
dependencies still gets that check's one line instead of an import error.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from store.store import Store


@pytest.fixture
def store(workspace: Path) -> Store:
    """A `Store` on the workspace copy whose clock stands at `tests.support.proposals.NOW`."""
    from store.store import Store  # deferred: see the module docstring
    from tests.support.proposals import fixed

    return Store(workspace, clock=fixed())
