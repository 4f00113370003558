"""Closing a store ends its warm-up's wait for a first search (every session that closed before
its first search waited it out, and the tests' sessions close that way by the hundred)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from store import store as store_module
from store.store import Store
from tests.support.store_helpers import write_memory


def test_close_ends_the_wait_for_a_first_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "FIRST_ANSWER_WAIT", 600.0)
    monkeypatch.setenv("ENGRAM_VECTORS", "0")
    write_memory(tmp_path, "a-rule", title="A rule", body="Say it once.\n", type="rule")
    store = Store(tmp_path, env={"ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_VECTORS": "0"})
    warming = threading.Thread(target=store.warm)
    warming.start()
    store.close()
    warming.join(10)
    assert not warming.is_alive(), "the warm-up still waits for a search after close"
