"""The platform's change notification on memory folders (watchdog: inotify, FSEvents, kqueue).

Kept apart so watchdog and its observer threads are imported only by a large store's sweeper
(`Catalog._watch_folders` is the one place this module is imported), never by a small store,
a CLI command or the session hook.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

NATIVE = Observer is not PollingObserver
"""Whether the platform notifies at all (watchdog would poll, which the sweep already does)."""
_CHANGES = [FileModifiedEvent, FileClosedEvent, FileCreatedEvent, FileMovedEvent, FileDeletedEvent]
"""Changes only: reads (engram's own, for a body or a snippet) open files too, and every
opened/closed-unwritten event would wake three threads."""


class _Edited(FileSystemEventHandler):
    def __init__(self, edited: Callable[[list[str]], None]) -> None:
        self._edited = edited

    def on_any_event(self, event: FileSystemEvent) -> None:
        found = (os.fsdecode(p) for p in (event.src_path, event.dest_path) if p)
        self._edited([p for p in found if p.endswith(".md")])


class FolderWatch:
    """One observer thread for every memory folder watched; `edited` gets the `.md` paths that
    changed. OSError or RuntimeError (e.g. the inotify watch limit) reach the caller."""

    def __init__(self, edited: Callable[[list[str]], None]) -> None:
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.start()
        self._edited = edited

    def watch(self, folders: Iterable[Path], watched: set[Path]) -> None:
        """Watch each folder that exists and is not in `watched` yet, adding it there."""
        for folder in folders:
            if folder not in watched and folder.is_dir():
                handler = _Edited(self._edited)
                self._observer.schedule(handler, str(folder), recursive=False, event_filter=_CHANGES)
                watched.add(folder)

    def stop(self) -> None:
        self._observer.stop()
