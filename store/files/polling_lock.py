"""The workspace lock where there is no `flock` (Windows): filelock's, tried every 50 ms.

filelock locks one byte of the file with `msvcrt.locking` on Windows (and with `flock` on POSIX,
where store.files.lock never uses it: its tests do). Exclusive and re-entrant per lock object,
not first come first served. store.files.lock refuses a planted link or folder before it
calls this, and turns a timeout into ENGRAM_BUSY.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

POLL_SECONDS = 0.05


def acquire(path: Path, timeout: float) -> Callable[[], None] | None:
    """Hold the lock of `path`; its release, or None when it was not obtained within `timeout`."""
    lock = FileLock(str(path), thread_local=False)
    try:
        lock.acquire(timeout=timeout, poll_interval=POLL_SECONDS)
    except Timeout:
        return None
    return lock.release
