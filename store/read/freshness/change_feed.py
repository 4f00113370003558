"""Linux's inotify on a scope's memory folders, read without blocking at each refresh.

The kernel queues a folder's event before the call that caused it (a rename, a write's close)
returns, so a refresh that drains the queue sees every change made before it began, on the
request's own thread: a read right after a rename sees it, and no folder of 100,000 names is
listed again to find one. Where inotify is missing (macOS, Windows, a container without it) or
refuses a watch (the user's watch limit), `open_feed` gives None and the catalog lists the
folder when its mtime moves, as before. The names events carry come from the kernel but name
files a clone put there: the catalog checks each as a listing would (store.read.freshness.folder_scan.look).
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
import threading
import weakref
from pathlib import Path
from typing import Final

_NONBLOCK: Final = 0o4000
_CLOEXEC: Final = 0o2000000
_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_OVERFLOW, _IGNORED = 0x4000, 0x8000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_MASK: Final = (
    _MODIFY
    | _ATTRIB
    | _CLOSE_WRITE
    | _MOVED_FROM
    | _MOVED_TO
    | _CREATE
    | _DELETE
    | _DELETE_SELF
    | _MOVE_SELF
    | _ONLYDIR
    | _DONT_FOLLOW
)
_LOST: Final = _DELETE_SELF | _MOVE_SELF | _IGNORED
"""The watched folder itself went (or its watch did): its names can no longer be followed."""
_HEAD: Final = struct.Struct("iIII")


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 (present, or AttributeError)
    except (OSError, AttributeError):
        return None
    return libc


class _Inotify:
    """The process's one inotify descriptor (a user may open only ~128): every catalog's
    subscription shares it, and each event goes to every subscription following its folder."""

    def __init__(self, fd: int, libc: ctypes.CDLL) -> None:
        self._fd = fd
        self._libc = libc
        self._lock = threading.Lock()
        self._followers: dict[int, weakref.WeakSet[Subscription]] = {}
        self._live: weakref.WeakSet[Subscription] = weakref.WeakSet()

    def follow(self, subscription: Subscription, folder: Path) -> int | None:
        with self._lock:
            wd: int = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), _MASK)
            if wd < 0:
                return None
            self._followers.setdefault(wd, weakref.WeakSet()).add(subscription)
            self._live.add(subscription)
            subscription.followed(wd, folder)
            return wd

    def drain(self) -> None:
        """Move what the kernel queued to each subscription following its folder."""
        with self._lock:
            while True:
                try:
                    data = os.read(self._fd, 1 << 16)
                except BlockingIOError:
                    return
                except InterruptedError:
                    continue
                except OSError:
                    self._overflowed()
                    return
                self._deliver(data)

    def _deliver(self, data: bytes) -> None:
        at = 0
        while at + _HEAD.size <= len(data):
            wd, mask, _, size = _HEAD.unpack_from(data, at)
            raw = data[at + _HEAD.size : at + _HEAD.size + size].rstrip(b"\0")
            at += _HEAD.size + size
            if mask & _OVERFLOW:
                self._overflowed()
                continue
            followers = self._followers.get(wd)
            if followers is None:
                continue
            if mask & _LOST:
                del self._followers[wd]
            for subscription in followers:
                subscription.received(wd, os.fsdecode(raw) if raw else "", lost=bool(mask & _LOST))

    def _overflowed(self) -> None:
        for subscription in self._live:
            subscription.overflow = True


class Subscription:
    """One catalog's share of the feed: the names changed in its folders since it last took."""

    def __init__(self, inotify: _Inotify) -> None:
        self._inotify = inotify
        self._folders: dict[int, Path] = {}
        self._names: dict[Path, set[str]] = {}
        self._lost: set[Path] = set()
        self.overflow = False
        """The kernel's queue overflowed: some change may be missing, so every folder is listed."""

    def follow(self, folder: Path) -> bool:
        """Follow `folder` (never through a link); False when it is missing or refused."""
        return self._inotify.follow(self, folder) is not None

    def followed(self, wd: int, folder: Path) -> None:
        self._folders[wd] = folder
        self._lost.discard(folder)

    def received(self, wd: int, name: str, *, lost: bool) -> None:
        folder = self._folders.get(wd)
        if folder is None:
            return
        if lost:
            self._lost.add(folder)
            del self._folders[wd]
        elif name:
            self._names.setdefault(folder, set()).add(name)

    def take(self) -> tuple[dict[Path, set[str]], set[Path], bool]:
        """(names changed per folder, folders no longer followed, whether the queue overflowed)."""
        self._inotify.drain()
        with self._inotify._lock:
            names, self._names = self._names, {}
            lost, self._lost = self._lost, set()
            overflow, self.overflow = self.overflow, False
        return names, lost, overflow


_shared: _Inotify | None = None
_opened = False
_opening = threading.Lock()


def subscribe() -> Subscription | None:
    """A share of the process's feed, or None where the platform has no inotify or refuses one."""
    global _shared, _opened
    with _opening:
        if not _opened:
            _opened = True
            libc = _libc()
            fd = libc.inotify_init1(_NONBLOCK | _CLOEXEC) if libc is not None else -1
            _shared = _Inotify(fd, libc) if libc is not None and fd >= 0 else None
    return Subscription(_shared) if _shared is not None else None
