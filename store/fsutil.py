"""The one atomic write (temp file in the same folder, fsync, rename) and the workspace lock."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from store.errors import Busy

LOCK_TIMEOUT_SECONDS: Final = 5.0


def write_atomic(path: Path, data: bytes, *, mode: int | None = None, sync_dir: bool = True) -> str:
    """Write `data` so a crash leaves either the old file or the new one; return its sha256.

    `sync_dir=False` leaves the folder's fsync to the caller (a batch syncs each folder once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    if sync_dir:
        fsync_dir(path.parent)
    return hashlib.sha256(data).hexdigest()


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_locks: dict[str, Any] = {}
_locks_guard = threading.Lock()


def _file_lock(lock_path: Path) -> Any:
    """One FileLock per path in this process: re-entrant in a thread, exclusive across threads."""
    from filelock import FileLock

    with _locks_guard:
        lock = _locks.get(str(lock_path))
        if lock is None:
            lock = _locks[str(lock_path)] = FileLock(str(lock_path), thread_local=True)
        return lock


@contextlib.contextmanager
def workspace_lock(lock_path: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the cross-process lock of one `.engram/` folder; Busy when not obtained in time."""
    from filelock import Timeout

    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = _file_lock(lock_path)
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise Busy(
            f"the workspace is busy (lock held for more than {timeout:g} s by another engram process); "
            "nothing was changed and retrying is safe"
        ) from None
    try:
        yield
    finally:
        lock.release()


STALE_TEMP_SECONDS: Final = 60.0


def clean_stale_temps(folder: Path, prefix: str = ".", older_than: float = STALE_TEMP_SECONDS) -> int:
    """Remove temp files a killed writer left in `folder` (`<prefix>*.tmp`, older than a minute)."""
    import time

    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    cutoff = time.time() - older_than
    for entry in entries:
        if (
            entry.name.startswith(prefix)
            and entry.name.endswith(".tmp")
            and entry.is_file(follow_symlinks=False)
        ):
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
    return removed
