"""The per-user secret that keys the tags on engram's derived and state files (SPEC §2).

The rest, and why: docs/design.md, `store/files/user_key.py`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from store.files import fs_platform

log = logging.getLogger("engram.store")

SIZE: Final = 32
MODE: Final = 0o600
FILE_NAME: Final = "secret"


@dataclass(frozen=True, slots=True)
class Secret:
    key: bytes
    notice: str | None = None
    """Set when the secret file had to be replaced (the message says why)."""
    stored: bool = True
    """False for a read-only store's stand-in key (no secret file exists yet)."""


_cache: dict[str, Secret] = {}
_guard = threading.Lock()


def user_secret(home: Path, *, create: bool = True) -> Secret:
    """The secret of this ENGRAM_HOME, read (or created) once per process."""
    name = str(home)
    with _guard:
        found = _cache.get(name)
        if found is None:
            found = _load(home, create)
            if found.stored:  # a read-only store's stand-in key is never shared
                _cache[name] = found
        return found


def _load(home: Path, create: bool) -> Secret:
    path = home / FILE_NAME
    problem = _check(path)
    if problem is None:
        try:
            return Secret(_read(path))
        except OSError as exc:
            problem = f"cannot be read ({exc.strerror})"
    if not create:
        return Secret(secrets.token_bytes(SIZE), stored=False)
    key = secrets.token_bytes(SIZE)
    try:
        if problem != "missing":
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        key = _create(path, key)
    except OSError as exc:  # a home that cannot be written: a key for this process alone
        notice = (
            f"$ENGRAM_HOME/{FILE_NAME} {'is missing' if problem == 'missing' else problem} and no new "
            f"one could be written ({exc.strerror}); "
            "engram uses a key for this process alone, so it trusts none of its stored files and "
            "pending proposals do not outlive this process. Fix: make $ENGRAM_HOME a folder you "
            "can write"
        )
        log.warning("%s", notice)
        return Secret(key, notice, stored=False)
    if problem == "missing":
        return Secret(key)
    notice = (
        f"$ENGRAM_HOME/{FILE_NAME} {problem}; replaced with a new secret, so engram's derived files "
        "are rebuilt and pending proposals must be made again"
    )
    log.warning("%s", notice)
    return Secret(key, notice)


def _check(path: Path) -> str | None:
    """None when the file is a sound secret; else what is wrong with it."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if fs_platform.modes_enforced() and stat.S_IMODE(info.st_mode) != MODE:
        return f"had mode {stat.S_IMODE(info.st_mode):04o}, not 0600"
    if info.st_size != SIZE:
        return f"held {info.st_size} bytes, not {SIZE}"
    if fs_platform.modes_enforced() and hasattr(os, "getuid") and info.st_uid != os.getuid():
        return "belongs to another user"
    return None


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | fs_platform.OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if fs_platform.LINKS_FOLLOWED and fs_platform.opened_through_link(path, fd):
            raise OSError(0, "a symbolic link")
        data = os.read(fd, SIZE + 1)
    finally:
        os.close(fd)
    if len(data) != SIZE:
        raise OSError(0, "wrong size")
    return data


def _create(path: Path, key: bytes | None = None) -> bytes:
    """Write a new secret atomically; when another process won the race, use its secret."""
    key = key or secrets.token_bytes(SIZE)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{FILE_NAME}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | fs_platform.CREATE_FLAGS, MODE)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.chmod(temp, MODE)  # whatever the umask (on Windows: not read-only, all it sets)
        os.link(temp, path)
    except FileExistsError:
        try:
            key = _read(path)
        except OSError:
            fs_platform.replace(temp, path)
            return key
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    return key
