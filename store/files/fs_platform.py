"""What the file system does differently on Linux, macOS and Windows: the one place store/ asks.

`sys.platform` is read when asked, so a test fakes another platform with monkeypatch; the open
flags are read from `os` once, at import (every open adds them), and `open_flags` computes them
again from a faked `os`. The application's side (host config folders, console
scripts, signals) is engram_mcp/platform.py; store/ never imports it. (The name is not
`platform.py`: two product modules never share a name.)

* **Open flags** (`open_flags`). POSIX opens engram's own files with O_NOFOLLOW (never through a
  link a clone planted), O_NONBLOCK (a planted FIFO opens at once instead of blocking) and
  O_CLOEXEC. Windows has none of the three: a FIFO cannot sit in a folder there (named pipes
  live under `\\\\.\\pipe\\`), Python makes every descriptor non-inheritable itself (PEP 446),
  and a link is found after the open instead (`opened_through_link`). Windows alone needs
  O_BINARY: without it `os.open` gives a text-mode descriptor, whose writes turn `\\n` into
  `\\r\\n` (the sha256 of the bytes written would not be the file's) and whose reads end at a
  Ctrl-Z byte.
* **Folder fsync** (`syncs_folders`). POSIX fsyncs a folder after a rename so the new name
  survives a power cut. Windows cannot open a folder as a file (`os.open` fails, EACCES) and NTFS
  journals the rename itself: skipped there, never an error. macOS fsyncs the folder as Linux
  does (its fsync does not flush the drive's own cache; F_FULLFSYNC would, at tens of
  milliseconds a write, and is not used).
* **Renames over a file in use** (`replace`). Windows refuses to rename over a file another
  process has open (PermissionError: a reader between its open and its close, a virus scanner);
  the rename is tried again for up to `REPLACE_RETRY_SECONDS`. POSIX renames at once.
* **File modes** (`modes_enforced`). The per-user secret is mode 0600 on POSIX, and a secret of
  any other mode (or another owner) is replaced. On Windows `chmod` only sets or clears the
  read-only flag (every file reads as 0666 or 0444) and there are no POSIX owners, so neither is
  checked there. What protects the secret on Windows is its folder: `$ENGRAM_HOME` defaults to
  `%USERPROFILE%\\.config\\engram`, and a profile folder's access list admits only its user,
  SYSTEM and the Administrators (who, like root on POSIX, can read any file anyway). An
  `$ENGRAM_HOME` set elsewhere (a shared drive) gets that folder's access list.
* **Locking** (store/files/lock.py). POSIX: a queue of `flock`ed tickets, first come first
  served, woken by the kernel. Windows has no `flock`: filelock's lock (`msvcrt.locking` of one
  byte, tried every 50 ms: store/files/polling_lock.py), exclusive and re-entrant but not first come first served; a link or
  anything but a regular file at the lock's path is refused before filelock opens it (it opens
  with O_TRUNC and follows links).
* **Folder separators** (`slashed`). A memory is shared through git between teammates on every
  platform, so what its `refs:` and `paths:` mean cannot depend on where it was written: `\\` is
  a folder separator in both, on every platform (`src\\app.py` is `src/app.py`; a file whose name
  holds a `\\`, legal on POSIX only, cannot be cited). A ref is checked for `..`, an absolute
  path and a drive after this, so `..\\..\\etc` is refused like `../../etc` (store.code.refs).
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
