"""A large catalog's background sweeper (store.read.catalog.Catalog inherits it): it finds
edits made in place, which move no folder's mtime, off the request path, with the platform's
change notification where there is one, and otherwise by stat'ing every known file between
pauses that keep it under SWEEP_SHARE of a core."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from store.read.freshness.entry import Entry

SWEEP_SECONDS: Final = 2.0
"""The shortest pause between two background sweeps of a large store."""
SWEEP_SHARE: Final = 0.005
"""The most of one core background sweeps may take: a sweep that took d seconds is followed by
a pause of at least d / SWEEP_SHARE."""
WATCH_AFTER: Final = 0.5
"""Seconds the sweeper lets pass before it asks for change notification: importing watchdog and
starting its threads (~30 ms) would otherwise compete with a server's first search."""
WATCHED_SWEEP_SECONDS: Final = 300.0
"""The pause between sweeps while change notification watches every memory folder (a sweep
then only catches what a notification could miss, such as an overflowed event queue)."""


def sweep_pause(took: float, *, watched: bool) -> float:
    """Seconds to wait before the next background sweep, after one that took `took` seconds."""
    return max(WATCHED_SWEEP_SECONDS if watched else SWEEP_SECONDS, took / SWEEP_SHARE)


def _edited(known: list[tuple[str, int, int]]) -> list[str]:
    """The paths whose (mtime, size) differ from what is known of them."""
    edited = []
    for path, mtime_ns, size in known:
        try:
            stat = os.stat(path, follow_symlinks=False)
        except OSError:
            continue  # gone: the folder listing notices
        if (stat.st_mtime_ns, stat.st_size) != (mtime_ns, size):
            edited.append(path)
    return edited


class Sweeping:
    """The sweeper of one scope's catalog (the state is the catalog's own)."""

    _lock: threading.Lock
    _entries: dict[str, Entry]
    _tiers: list[tuple[str, Path]]
    _sweeper: threading.Thread | None
    _swept: set[str]
    _swept_lock: threading.Lock
    _closed: threading.Event
    _watch: bool
    _background: bool
    _watcher: Any
    _watched: set[Path]
    _clock: Callable[[], float]
    _fed: set[Path]

    def _start_sweeper(self) -> None:
        """Large stores: find edits made in place (same name, same folder mtime) off the request
        path, so the next read after one takes it in."""
        if self._sweeper is None and self._background and not self._closed.is_set():
            self._sweeper = threading.Thread(target=self.sweep_forever, name="engram-sweep", daemon=True)
            self._sweeper.start()

    def sweep_forever(self, wait: Callable[[float], bool] | None = None) -> None:
        """Watch the memory folders where the platform can (after `WATCH_AFTER`, then one sweep
        for what was edited before the watch began), and sweep between pauses (see
        `sweep_pause`) until `close`. `wait(seconds)` returns True to stop (tests inject it)."""
        wait = wait or self._closed.wait
        took = 0.0  # the first refresh has just stat'ed every file
        if self._watch:
            if wait(WATCH_AFTER):
                return
            if self._watch_folders():  # watched from now on: catch what was edited before
                began = self._clock()
                self.note_edited(self._stat_all())
                took = self._clock() - began
        while True:
            if wait(sweep_pause(took, watched=self._watch_folders())):
                return
            began = self._clock()
            self.note_edited(self._stat_all())
            took = self._clock() - began

    def _stat_all(self) -> list[str]:
        with self._lock:
            known = [(path, e.mtime_ns, e.size) for path, e in self._entries.items()]
        return _edited(known)

    def _stat_all_locked(self) -> list[str]:
        return _edited([(path, e.mtime_ns, e.size) for path, e in self._entries.items()])

    def _watch_folders(self) -> bool:
        """Ask for change notification on every memory folder that exists and is not watched
        yet; True when all of them are. False where the platform has none (watchdog would poll,
        which is what the sweep already does) or when the system refuses a watch."""
        if not self._watch or self._closed.is_set():
            return False
        if self._fed and all(folder in self._fed or not folder.is_dir() for _, folder in self._tiers):
            return True  # the kernel's feed, read at each refresh, sees what changes
        try:
            from store.read.freshness import folder_watch  # seam: watchdog and its observer threads
        except ImportError:
            return False
        if not folder_watch.NATIVE:
            return False
        folders = [folder for _, folder in self._tiers]
        try:
            if self._watcher is None:
                self._watcher = folder_watch.FolderWatch(self.note_edited)
            self._watcher.watch(folders, self._watched)
        except (OSError, RuntimeError):  # e.g. the inotify watch limit: sweeping still works
            return False
        return all(folder in self._watched or not folder.is_dir() for folder in folders)

    def note_edited(self, paths: list[str]) -> None:
        """These files may have changed in place: the next refresh re-stats them."""
        if paths:
            with self._swept_lock:
                self._swept.update(paths)
