"""The one atomic write (temp file in the same folder, fsync, rename); the workspace lock is
`store.lock`'s, re-exported here for the modules that take it."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Final

from store.lock import LOCK_TIMEOUT_SECONDS as LOCK_TIMEOUT_SECONDS
from store.lock import workspace_lock as workspace_lock


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
