"""Single files, safely: the one atomic write (temp file in the same folder, fsync, rename),
reads that never block on a FIFO nor follow a link, and the sweep of a killed writer's temp
files. Multi-file writes are store.write.transaction's."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import time
from pathlib import Path
from typing import Final

from store.errors import NotRegular
from store.files import fs_platform


def write_atomic(path: Path, data: bytes, *, mode: int | None = None, sync_dir: bool = True) -> str:
    """Write `data` so a crash leaves either the old file or the new one; return its sha256.

    `sync_dir=False` leaves the folder's fsync to the caller (a batch syncs each folder once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        fs_platform.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    if sync_dir:
        fsync_dir(path.parent)
    return hashlib.sha256(data).hexdigest()


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new file `.<name>.<random>.tmp` in `path`'s folder, created exclusively, mode 0600, never
    through a link (what `tempfile.mkstemp` does, without importing tempfile, random and shutil
    into every process that may write)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | fs_platform.CREATE_FLAGS
    while True:
        name = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:  # 48 random bits taken: draw again
            continue


def open_regular(path: Path | str, *, follow: bool = False, flags: int = os.O_RDONLY) -> int:
    """A descriptor of a regular file, never blocking and (unless `follow`) never through a link.

    O_NONBLOCK makes opening a FIFO return at once (a plain open would wait for a writer forever),
    O_NOFOLLOW refuses a link, and fstat on the descriptor (not a stat before the open) decides,
    so a file swapped in between cannot slip through. `follow=True` is for a file the user may
    keep as a link (`$ENGRAM_HOME/config.json` in a dotfiles repository): the link is followed,
    but its target must still be a regular file. `flags` adds write flags (an append).
    FileNotFoundError when absent; NotRegular for a link, folder, FIFO, device or socket."""
    return _open_checked(path, follow, flags)[0]


def _open_checked(path: Path | str, follow: bool, flags: int) -> tuple[int, os.stat_result]:
    """`open_regular`'s descriptor and what fstat said of it (store.files.fs_platform: where
    there is no O_NOFOLLOW, a link is found after the open)."""
    try:
        fd = os.open(path, flags | (fs_platform.OPEN_FOLLOWING if follow else fs_platform.OPEN_FLAGS), 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular(errno.ELOOP, "is a symbolic link") from None
        if exc.errno in (errno.ENXIO, errno.ENODEV) or fs_platform.is_folder(
            exc, path
        ):  # a FIFO opened to write; a folder
            raise NotRegular(exc.errno, "is not a regular file") from None
        raise
    if fs_platform.LINKS_FOLLOWED and not follow and fs_platform.opened_through_link(path, fd):
        os.close(fd)
        raise NotRegular(errno.ELOOP, "is a symbolic link")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotRegular(errno.EINVAL, "is not a regular file")
    return fd, info


def read_regular(path: Path | str, limit: int | None = None, *, follow: bool = False) -> bytes:
    """The bytes of a regular file (see `open_regular`); NotRegular beyond `limit` bytes too.

    Read straight from the descriptor (no file object: a fresh build reads every memory)."""
    fd, info = _open_checked(path, follow, os.O_RDONLY)
    try:
        if limit is not None and info.st_size > limit:
            raise NotRegular(errno.EFBIG, f"is larger than {limit} bytes")
        # ask for what the file holds and one more byte (growth shows; EOF in one call)
        data = _read(fd, info.st_size + 1, None if limit is None else info.st_size + 1)
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise NotRegular(errno.EFBIG, f"is larger than {limit} bytes")
    return data


def _read(fd: int, first: int, most: int | None) -> bytes:
    """Up to `most` bytes from `fd` (None: to the end), asking for `first` at once."""
    parts: list[bytes] = []
    got = 0
    want = first
    while most is None or got < most:
        chunk = os.read(fd, want if most is None else min(want, most - got))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
        want = 1 << 16
    return parts[0] if len(parts) == 1 else b"".join(parts)


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable; skipped where a folder cannot be fsynced (Windows),
    and a failure is no error (the rename itself happened)."""
    if not fs_platform.syncs_folders():
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


STALE_TEMP_SECONDS: Final = 60.0


def clean_stale_temps(folder: Path, prefix: str = ".", older_than: float = STALE_TEMP_SECONDS) -> int:
    """Remove temp files a killed writer left in `folder` (`<prefix>*.tmp`, older than a minute)."""
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
