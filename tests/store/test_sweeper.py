"""Large stores: edits made in place are found off the request path, and an idle server
stays idle (issue 11). No test here waits out a real sweep pause: the clock and the wait are
injected."""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import pytest

from store.files.workspace import project_dir
from store.read import catalog
from store.read.catalog import Catalog
from store.read.freshness.sweeper import SWEEP_SECONDS, SWEEP_SHARE, WATCHED_SWEEP_SECONDS, sweep_pause
from tests.support.store_helpers import count_listings, write_memory


@pytest.fixture
def large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace holding more memories than a "small" store (the limit is lowered to 3)."""
    monkeypatch.setattr(catalog, "SMALL_STORE", 3)
    for n in range(5):
        write_memory(tmp_path, f"fact-{n}", title=f"Fact number {n}")
    return tmp_path


def _edit_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Rewrite the file's bytes through the same inode: the folder's mtime does not change."""
    data = path.read_bytes()
    with path.open("r+b") as handle:
        handle.write(data.replace(old, new))
        handle.truncate()


def _titles(snapshot: catalog.Snapshot) -> set[str]:
    return {m.title for m in snapshot.memories}


@pytest.mark.parametrize("took", [0.0, 0.001, 0.3, 2.0, 30.0])
@pytest.mark.parametrize("watched", [True, False])
def test_a_sweep_is_followed_by_a_pause_that_keeps_it_under_one_percent_of_a_core(
    took: float, watched: bool
) -> None:
    """engram's choice: sweeps take at most SWEEP_SHARE (0.5 %) of a core, never more often
    than every SWEEP_SECONDS, and only every WATCHED_SWEEP_SECONDS as a safety net while the
    platform notifies changes."""
    pause = sweep_pause(took, watched=watched)
    assert took / (took + pause) <= SWEEP_SHARE < 0.01
    assert pause >= (WATCHED_SWEEP_SECONDS if watched else SWEEP_SECONDS)


def test_the_sweeper_pauses_by_what_its_last_sweep_took(large: Path) -> None:
    """Without change notification, a sweep of 0.25 s (about 100,000 files) is followed by a
    50 s pause; the first pause is the shortest, as the first read has just stat'ed every file."""
    ticks = itertools.count()
    scope = Catalog(project_dir(large), persist=False, watch=False, clock=lambda: next(ticks) * 0.25)
    scope.refresh()
    scope.close()  # the background sweeper stops: this test drives one itself
    pauses: list[float] = []
    scope.sweep_forever(wait=lambda seconds: pauses.append(seconds) or len(pauses) == 3)
    assert pauses == [SWEEP_SECONDS, 0.25 / SWEEP_SHARE, 0.25 / SWEEP_SHARE]


def test_an_in_place_edit_is_found_by_the_sweep_and_taken_in_by_the_next_read(large: Path) -> None:
    """Without change notification, the sweep notes the edited file; the next read re-reads it."""
    scope = Catalog(project_dir(large), persist=False, watch=False)
    assert "Fact number 1" in _titles(scope.refresh())
    _edit_in_place(large / ".engram" / "memory" / "fact-1.md", b"Fact number 1", b"Fact number one")
    assert "Fact number one" not in _titles(scope.refresh())  # a large store does not stat on reads
    scope.close()  # the background sweeper stops: this test drives one itself
    sweeps = iter([False, True])  # one pause, one sweep, stop
    scope.sweep_forever(wait=lambda seconds: next(sweeps))
    assert "Fact number one" in _titles(scope.refresh())


def test_an_in_place_edit_is_notified_and_seen_without_a_sweep(
    large: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the kernel's feed is missing (macOS, Windows), watchdog's notification names the
    edited file to a later read; the background sweep waits its long safety-net pause."""
    pytest.importorskip("watchdog")
    from store.read.freshness import change_feed

    monkeypatch.setattr(change_feed, "subscribe", lambda: None)
    scope = Catalog(project_dir(large), persist=False)
    try:
        assert "Fact number 2" in _titles(scope.refresh())
        deadline = time.monotonic() + 10
        while not scope._watched and time.monotonic() < deadline:  # the sweeper thread sets it up
            time.sleep(0.01)
        assert scope._watched, "no change notification on this platform"
        _edit_in_place(large / ".engram" / "memory" / "fact-2.md", b"Fact number 2", b"Fact number two")
        while "Fact number two" not in _titles(scope.refresh()) and time.monotonic() < deadline:
            time.sleep(0.01)  # the notification crosses a thread; it takes milliseconds
        assert "Fact number two" in _titles(scope.refresh())
    finally:
        scope.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's feed is inotify")
def test_the_kernels_feed_names_every_change_to_the_very_next_read(
    large: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linux: a long-lived catalog follows its folders through inotify and drains the queue at
    each read, so an in-place edit, a rename over a file, a new file, a removal, and a link
    planted under a memory's name are each seen by the read right after, with no listing, no
    sweep and no thread; the link is refused as a listing refuses it."""
    folder = large / ".engram" / "memory"
    scope = Catalog(project_dir(large), persist=False)
    try:
        scope.refresh()
        assert scope._fed == {folder}
        listings = count_listings(monkeypatch)
        _edit_in_place(folder / "fact-2.md", b"Fact number 2", b"Fact number two")
        assert "Fact number two" in _titles(scope.refresh())
        replacement = folder / "new.tmp"
        replacement.write_bytes((folder / "fact-3.md").read_bytes().replace(b"number 3", b"number three"))
        replacement.rename(folder / "fact-3.md")
        write_memory(large, "fact-9", title="Fact number 9")
        (folder / "fact-0.md").unlink()
        (folder / "fact-7.md").symlink_to(folder / "fact-9.md")
        snapshot = scope.refresh()
        titles = {"Fact number 1", "Fact number two", "Fact number three", "Fact number 4", "Fact number 9"}
        assert _titles(snapshot) == titles
        assert [p.message for p in snapshot.problems] == ["symbolic links are not followed; skipped"]
        (folder / "fact-7.md").unlink()
        assert not scope.refresh().problems
        assert folder not in listings  # the memory folder was never listed again
    finally:
        scope.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's feed is inotify")
def test_an_overflowed_queue_or_a_lost_folder_is_listed_whole(
    large: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the kernel's queue overflowed some change may be missing from it: the next read lists
    every followed folder (and follows it again); a folder no longer followed is listed too."""
    folder = large / ".engram" / "memory"
    scope = Catalog(project_dir(large), persist=False)
    try:
        scope.refresh()
        assert scope._feed is not None and folder in scope._fed
        listings = count_listings(monkeypatch)
        write_memory(large, "fact-8", title="Fact number 8")
        scope._feed.overflow = True
        assert "Fact number 8" in _titles(scope.refresh())
        assert listings == [folder] and folder in scope._fed
        scope._feed.received(next(iter(scope._feed._folders)), "", lost=True)
        scope.refresh()
        assert listings == [folder, folder]
    finally:
        scope.close()
