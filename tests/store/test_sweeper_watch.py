"""The sweeper asks for change notification only after WATCH_AFTER (a server's first search
goes first), and then sweeps once: an edit made in place before the watch began is found."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from store.files.workspace import project_dir
from store.read import catalog
from store.read.catalog import Catalog
from store.read.freshness import sweeper
from store.read.freshness.sweeper import WATCH_AFTER, WATCHED_SWEEP_SECONDS
from tests.support.store_helpers import write_memory


def _store(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(catalog, "SMALL_STORE", 3)
    for n in range(5):
        write_memory(root, f"fact-{n}", title=f"Fact number {n}")
    return root / ".engram" / "memory" / "fact-3.md"


def _edit_in_place(path: Path) -> None:
    """Same inode, same size, a later mtime: the folder's mtime does not change."""
    data = path.read_bytes()
    stamp = path.stat().st_mtime_ns
    with path.open("r+b") as handle:
        handle.write(data.replace(b"Fact number 3", b"Fact number 9"))
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))


def test_an_edit_made_before_the_watch_began_is_found_by_the_sweep_that_follows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("watchdog")
    edited = _store(tmp_path, monkeypatch)
    scope = Catalog(project_dir(tmp_path), persist=False, background=False)
    assert "Fact number 3" in {m.title for m in scope.refresh().memories}
    pauses: list[float] = []

    def wait(seconds: float) -> bool:
        pauses.append(seconds)
        if len(pauses) == 1:
            _edit_in_place(edited)  # while the sweeper lets the first search go first
        return len(pauses) == 2

    try:
        scope.sweep_forever(wait=wait)
        assert scope._watched, "no change notification on this platform"
        assert pauses == [WATCH_AFTER, WATCHED_SWEEP_SECONDS]
        titles = {m.title for m in scope.refresh().memories}
        assert "Fact number 9" in titles and "Fact number 3" not in titles
    finally:
        scope.close()


def test_without_notification_the_sweeper_starts_its_pauses_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(tmp_path, monkeypatch)
    scope = Catalog(project_dir(tmp_path), persist=False, watch=False, background=False)
    scope.refresh()
    pauses: list[float] = []
    scope.sweep_forever(wait=lambda seconds: pauses.append(seconds) or True)
    assert pauses == [sweeper.SWEEP_SECONDS]
