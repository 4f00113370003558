"""What the file system does differently on Linux, macOS and Windows: the one place store/ asks.

The rest, and why: docs/design.md, `store/files/fs_platform.py`.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from pathlib import Path
from typing import Final

REPLACE_RETRY_SECONDS: Final = 1.0
"""How long a rename over a file another process holds open is retried (Windows only)."""


def windows() -> bool:
    return sys.platform == "win32"


def open_flags(*, follow: bool = False, nonblock: bool = True) -> int:
    """The flags an `os.open` of engram's own files adds: O_NOFOLLOW (unless `follow`),
    O_NONBLOCK (unless `nonblock=False`: a file created exclusively cannot be a FIFO), O_CLOEXEC
    and O_BINARY, each where this platform's `os` has it (the module docstring says what stands
    in for the missing ones). On Linux and macOS: exactly the POSIX flags, O_BINARY being 0.
    Read from `os` when called; the constants below are its answers at import."""
    flags = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if nonblock:
        flags |= getattr(os, "O_NONBLOCK", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    return flags


OPEN_FLAGS: Final = open_flags()
"""Added to every open of an existing file of engram's (never through a link, never blocking)."""
OPEN_FOLLOWING: Final = open_flags(follow=True)
"""Added to the open of a file the user may keep as a link (`$ENGRAM_HOME/config.json`)."""
CREATE_FLAGS: Final = open_flags(nonblock=False)
"""Added to O_CREAT | O_EXCL opens (a temp file, the secret)."""
LINKS_FOLLOWED: Final = not hasattr(os, "O_NOFOLLOW")
"""`os.open` follows a link at the last component whatever the flags (Windows): then
`opened_through_link` checks after the open."""


def opened_through_link(path: Path | str, fd: int) -> bool:
    """Whether `fd`, just opened at `path`, came through a link: `path` is a link now, or names
    another file than the one open (it was swapped in between). Where O_NOFOLLOW exists the open
    itself refused a link, and this is not needed."""
    try:
        named = os.lstat(path)
    except OSError:
        return True
    if stat.S_ISLNK(named.st_mode):
        return True
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino)


def is_folder(error: OSError, path: Path | str) -> bool:
    """Whether a failed `os.open` of `path` failed because a folder is there: EISDIR on POSIX;
    Windows says EACCES for a folder (and for a file it may not read)."""
    if error.errno == errno.EISDIR:
        return True
    return windows() and error.errno == errno.EACCES and os.path.isdir(path)


def syncs_folders() -> bool:
    """Whether a folder can be fsynced (opened as a file): not on Windows."""
    return not windows()


def modes_enforced() -> bool:
    """Whether POSIX file modes and owners hold (so a 0600 secret can be required): not on
    Windows, where chmod sets only the read-only flag."""
    return not windows()


def replace(source: str | Path, target: str | Path) -> None:
    """`os.replace`; on Windows a rename refused because another process holds `target` open is
    tried again for up to REPLACE_RETRY_SECONDS (that process lets go in microseconds)."""
    if not windows():
        os.replace(source, target)
        return
    deadline = time.monotonic() + REPLACE_RETRY_SECONDS
    pause = 0.002
    while True:
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def slashed(path: str) -> str:
    """A workspace path as written in a memory (`refs:`, `paths:`) with every `\\` read as the
    folder separator `/` (see the module docstring)."""
    return path.replace("\\", "/")
