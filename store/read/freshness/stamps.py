"""A memory folder's stamp: what index.json records of it so that a later process may take the
store in without listing the folder (store.read.catalog).

A stamp is the folder's mtime and ctime, its inode and device, and a time by which every change
to it had been taken in. It holds while the folder at that path is the same folder (inode and
device: not a folder swapped in, a parent renamed or a link retargeted) with the same mtime and
ctime: a file added, removed or renamed moves both, and ctime cannot be set back by `touch -d`
or `os.utime` (setting a time moves it). It is trusted only when it was taken at least
TRUST_AFTER_NS after the folder last changed, since a change in the same tick of a coarse
clock leaves the times as they were.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Final, NamedTuple

TRUST_AFTER_NS: Final = 2_000_000_000
ABSENT: Final = -1
"""The mtime a stamp gives a folder that does not exist."""


class Stamp(NamedTuple):
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int
    known: int
    """A time (wall clock, ns) by which every change to the folder had been taken in."""

    @property
    def folder(self) -> tuple[int, int]:
        """Which folder it is (inode, device), whatever its times."""
        return self.inode, self.device

    def worth_keeping(self) -> bool:
        """Whether a later process may trust it (taken long enough after the last change)."""
        return self.mtime_ns == ABSENT or self.known - max(self.mtime_ns, self.ctime_ns) >= TRUST_AFTER_NS


def now(folder: Path) -> Stamp | None:
    """The folder's stamp, `known` read before its times; an absent folder's has ABSENT
    everywhere; None when it cannot be read."""
    began = time.time_ns()
    try:
        found = os.stat(folder)
    except FileNotFoundError:
        return Stamp(ABSENT, ABSENT, ABSENT, ABSENT, began) if not os.path.lexists(folder) else None
    except OSError:
        return None
    return Stamp(found.st_mtime_ns, found.st_ctime_ns, found.st_ino, found.st_dev, began)


def holding(stored: object, folder: Path) -> Stamp | None:
    """The folder's stamp now when index.json's (`stored`, as `Stamp` wrote it) still holds:
    the same folder with the same times, and the stored one worth keeping; else None."""
    if not (isinstance(stored, list) and len(stored) == len(Stamp._fields)):
        return None
    if not all(type(value) is int for value in stored):
        return None
    kept = Stamp(*stored)
    found = now(folder)
    if found is None or not kept.worth_keeping() or found[:4] != kept[:4]:
        return None
    return found
