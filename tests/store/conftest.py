"""What the store suites share beyond tests/conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.store import Store
from tests.support.proposals import fixed


@pytest.fixture
def store(workspace: Path) -> Store:
    """A `Store` on the workspace copy whose clock stands at `tests.support.proposals.NOW`."""
    return Store(workspace, clock=fixed())
