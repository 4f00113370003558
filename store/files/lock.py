"""The workspace lock: cross-process, cross-thread, re-entrant in a thread, first come first served.

The rest, and why: docs/design.md, `store/files/lock.py`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from store.errors import UNWRITABLE_ERRNOS, Busy, UnsafePath, unwritable

LOCK_TIMEOUT_SECONDS: Final = 5.0
"""How long a writer waits for the lock before ENGRAM_BUSY (SPEC §2)."""
TIMEOUT_ENV: Final = "ENGRAM_LOCK_TIMEOUT"
"""Seconds, overriding the default wait: for tests that must not wait out 5 s, and for slow disks."""


def default_timeout() -> float:
    """`ENGRAM_LOCK_TIMEOUT` when set to a number of seconds (0.05 to 600), else 5 s."""
    raw = os.environ.get(TIMEOUT_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return LOCK_TIMEOUT_SECONDS
    return min(max(value, 0.05), 600.0) if value == value else LOCK_TIMEOUT_SECONDS


def _busy(timeout: float) -> Busy:
    return Busy(
        f"the workspace is busy (lock held for more than {timeout:g} s by another engram process); "
        "nothing was changed and retrying is safe"
    )


class _Held(threading.local):
    """Per thread: how deep each lock path is held (re-entry only counts)."""

    def __init__(self) -> None:
        self.depth: dict[str, int] = {}


_held = _Held()


@contextlib.contextmanager
def workspace_lock(lock_path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the cross-process lock of one `.engram/` folder; Busy when not obtained in time.

    `timeout` defaults to `default_timeout()` (5 s). Re-entrant within a thread; other threads
    and processes queue in arrival order."""
    depth = _held.depth
    key = str(lock_path)
    if key in depth:
        depth[key] += 1
        try:
            yield
        finally:
            depth[key] -= 1
        return
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        release = _acquire(lock_path, default_timeout() if timeout is None else timeout)
    except OSError as exc:
        if exc.errno in UNWRITABLE_ERRNOS:
            raise unwritable(f"{lock_path.parent.name}/", exc) from None
        raise
    depth[key] = 1
    try:
        yield
    finally:
        del depth[key]
        release()


def _link_refused(path: Path) -> UnsafePath:
    return UnsafePath(
        f"{path.name} is a symbolic link; engram does not follow links under .engram/ "
        "(remove it: engram recreates its lock files)"
    )


def _not_regular(path: Path) -> UnsafePath:
    return UnsafePath(
        f"{path.name} is not a regular file (a folder, FIFO or device); remove .engram/{path.name} "
        "(engram recreates its lock files); nothing was changed"
    )


Take = Callable[[Path, float], Callable[[], None] | None]
"""A lock primitive: hold a path's lock within a timeout; its release, or None."""


def _polling_acquire(lock_path: Path, timeout: float, take: Take) -> Callable[[], None]:
    """The lock where there is no `flock` (Windows): `take` is store.files.polling_lock's
    (filelock), called after refusing a link or anything but a regular file at `lock_path`."""
    try:
        mode = os.lstat(lock_path).st_mode
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISLNK(mode):
            raise _link_refused(lock_path)
        if not stat.S_ISREG(mode):
            raise _not_regular(lock_path)
    release = take(lock_path, timeout)
    if release is None:
        raise _busy(timeout)
    return release


if sys.platform == "win32":  # pragma: no cover - no flock (the polling lock is tested on Linux too)
    from store.files.polling_lock import acquire as _take_polling

    def _acquire(lock_path: Path, timeout: float) -> Callable[[], None]:
        return _polling_acquire(lock_path, timeout, _take_polling)

else:
    import fcntl

    def _acquire(lock_path: Path, timeout: float) -> Callable[[], None]:
        deadline = time.monotonic() + timeout
        queue_fd = _open_queue(lock_path.with_name(lock_path.name + ".queue.lock"))
        ticket_fd = -1
        ticket = ""
        main_fd = -1
        try:
            ticket, ticket_fd, ahead = _take_ticket(queue_fd)
            _wait_turn(queue_fd, int(ticket), ahead, deadline, timeout)
            main_fd = _open_nofollow(lock_path, os.O_RDWR | os.O_CREAT)
            if not _flock_by(main_fd, fcntl.LOCK_EX, deadline):
                main_fd = -1  # the helper thread owns it now
                raise _busy(timeout)
        except BaseException:
            _leave(queue_fd, ticket, ticket_fd)
            if main_fd >= 0:
                os.close(main_fd)
            raise

        def release() -> None:
            os.close(main_fd)  # closing drops the flock
            _leave(queue_fd, ticket, ticket_fd)

        return release

    def _open_nofollow(path: Path, flags: int, *, dir_fd: int | None = None) -> int:
        """Never through a link, never blocking (O_NONBLOCK: a FIFO opens at once); the lock
        file itself must be a regular file (a planted folder or FIFO is refused, never used)."""
        try:
            fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _link_refused(path) from None
            if exc.errno == errno.EISDIR:
                raise _not_regular(path) from None
            raise
        if not flags & os.O_DIRECTORY and not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise _not_regular(path)
        return fd

    def _open_queue(folder: Path) -> int:
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o755)
        try:
            return _open_nofollow(folder, os.O_RDONLY | os.O_DIRECTORY)
        except NotADirectoryError:
            raise UnsafePath(
                f"{folder.name} is not a folder; remove it (engram recreates its lock files)"
            ) from None

    def _tickets(queue_fd: int) -> list[int]:
        return sorted(int(name) for name in os.listdir(queue_fd) if name.isdigit())

    def _take_ticket(queue_fd: int) -> tuple[str, int, list[int]]:
        """(name, fd holding its exclusive flock, the tickets ahead of it)."""
        fcntl.flock(queue_fd, fcntl.LOCK_EX)  # held for a listing and a create: microseconds
        try:
            ahead = _tickets(queue_fd)
            number = (ahead[-1] + 1) if ahead else 1
            name = f"{number:012d}"
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644, dir_fd=queue_fd)
            fcntl.flock(fd, fcntl.LOCK_EX)  # before anyone can see the file: never taken for dead
        finally:
            fcntl.flock(queue_fd, fcntl.LOCK_UN)
        return name, fd, ahead

    def _wait_turn(queue_fd: int, own: int, ahead: list[int], deadline: float, timeout: float) -> None:
        """Block on the nearest ticket ahead until none is left (no new one can arrive ahead)."""
        ignored: set[int] = set()
        while ahead:
            number = ahead[-1]
            name = f"{number:012d}"
            try:
                fd = os.open(
                    name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=queue_fd
                )
            except OSError:  # gone meanwhile, or not a ticket engram wrote (a planted link)
                ignored.add(number)
            else:
                _wait_on(queue_fd, name, number, fd, ignored, deadline, timeout)
            ahead = [n for n in _tickets(queue_fd) if n < own and n not in ignored]

    def _wait_on(
        queue_fd: int, name: str, number: int, fd: int, ignored: set[int], deadline: float, timeout: float
    ) -> None:
        """Wait for the ticket open as `fd` to go (its owner left or died); closes `fd`."""
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            # A FIFO, folder or device is no ticket engram wrote (none holds a turn): a dead
            # ticket, removed (the queue folder is engram's own) or else skipped.
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=queue_fd)
            ignored.add(number)
            return
        if not _flock_by(fd, fcntl.LOCK_SH, deadline):
            raise _busy(timeout)
        try:
            if os.fstat(fd).st_nlink:  # still named: its owner died; remove it for everyone
                os.unlink(name, dir_fd=queue_fd)
        except OSError:
            ignored.add(number)  # not ours to remove: its flock is free, that is enough
        finally:
            os.close(fd)

    def _leave(queue_fd: int, ticket: str, ticket_fd: int) -> None:
        """Unlink the ticket, then drop its flock: the successor sees it gone, not dead."""
        if ticket_fd >= 0:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(ticket, dir_fd=queue_fd)
            os.close(ticket_fd)
        os.close(queue_fd)

    def _flock_by(fd: int, operation: int, deadline: float) -> bool:
        """flock(fd) before the deadline. On False the fd belongs to a helper thread, which
        closes it (dropping what it obtained) once its blocking call returns."""
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        waiter = _Waiter(fd, operation)
        return waiter.wait(deadline)

    class _Waiter:
        """A blocking flock in a helper thread, abandoned (and undone) after a deadline."""

        def __init__(self, fd: int, operation: int) -> None:
            self.fd, self.operation = fd, operation
            self.guard = threading.Lock()
            self.done = threading.Event()
            self.abandoned = False
            self.error: OSError | None = None

        def wait(self, deadline: float) -> bool:
            threading.Thread(target=self._run, name="engram-lock-wait", daemon=True).start()
            self.done.wait(max(0.0, deadline - time.monotonic()))
            with self.guard:
                if not self.done.is_set():
                    self.abandoned = True
                    return False
            if self.error is not None:
                os.close(self.fd)
                raise self.error
            return True

        def _run(self) -> None:
            try:
                fcntl.flock(self.fd, self.operation)
            except OSError as exc:
                self.error = exc
            with self.guard:
                if self.abandoned:
                    os.close(self.fd)  # too late: let go of what was obtained
                    return
                self.done.set()
