"""Settings changes are read-modify-write under the lock (issue 9, SPEC §4.5–4.6)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

import store.store
import store.write.settings
from store.config import load_config
from store.store import Store
from store.write import settings


def rule_variant_ids(workspace: Path) -> dict[str, Any]:
    config = orjson.loads((workspace / ".engram" / "config.json").read_bytes())
    return dict(config["rule_variant"].get("ids", {}))


@pytest.mark.timeout(30)
def test_a_change_made_while_another_reads_the_settings_is_not_lost(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic interleaving: B changes the settings at the instant A has read them. A must
    have read them under the lock (B waits for it), so A's write cannot drop B's change."""
    first = threading.Event()
    b_done = threading.Event()
    queue = workspace / ".engram" / "engram.lock.queue.lock"
    main = threading.current_thread()

    def run_b() -> None:
        settings.set_rule_variant(Store(workspace), "fixed", "terse", "use-uv-for-python")
        b_done.set()

    def hooked(*args: Any, **kwargs: Any) -> Any:
        found = load_config(*args, **kwargs)
        if threading.current_thread() is main and not first.is_set():
            first.set()
            threading.Thread(target=run_b).start()
            deadline = time.monotonic() + 10  # B either finishes or queues behind A's lock
            while not b_done.is_set() and time.monotonic() < deadline:
                if queue.is_dir() and len(os.listdir(queue)) >= 2:
                    break
                time.sleep(0.005)
        return found

    monkeypatch.setattr(store.store, "load_config", hooked)
    monkeypatch.setattr(store.write.settings, "load_config", hooked, raising=False)
    settings.set_rule_variant(Store(workspace), "fixed", "short", "squash-merge-only")
    assert first.is_set()
    assert b_done.wait(10)
    assert rule_variant_ids(workspace) == {
        "squash-merge-only": {"mode": "fixed", "variant": "short"},
        "use-uv-for-python": {"mode": "fixed", "variant": "terse"},
    }


@pytest.mark.timeout(60)
def test_concurrent_settings_from_many_writers_all_land(workspace: Path) -> None:
    """Eight writers (each its own Store, like separate servers) set one id each, and roles."""
    ids = [f"memory-{n}" for n in range(8)]
    barrier = threading.Barrier(len(ids))
    errors: list[BaseException] = []

    def run(memory_id: str) -> None:
        target = Store(workspace)
        target.config()  # a warm cache, as a long-running server has
        barrier.wait()
        try:
            for _ in range(3):
                settings.set_rule_variant(target, "fixed", "terse", memory_id)
                settings.set_role(target, "reviewer")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(50)
    assert errors == []
    assert sorted(rule_variant_ids(workspace)) == ids
    assert Store(workspace).config().role == "reviewer"


def test_set_role_reports_the_role_read_under_the_lock(workspace: Path) -> None:
    """`previous` is the role in force when the change was made, not one cached before."""
    stale = Store(workspace)
    assert stale.config().role == "default"
    settings.set_role(Store(workspace), "reviewer")
    assert settings.set_role(stale, "author") == ("reviewer", "author")
