"""A memory folder's listing (store.read.catalog): which files to read, and what is refused
before any is opened (a link leading out of the scope, a name that is no memory id, a FIFO)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from stat import S_ISLNK, S_ISREG
from typing import Final, Protocol

from store.errors import Problem
from store.files.ids import is_valid_id
from store.files.workspace import ScopeDir, unsafe

_PLAIN_FILE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}\.md")
NOT_REGULAR: Final = "not a regular file (a FIFO, device or folder); skipped, never opened"


class Listed(Protocol):
    @property
    def inode(self) -> int: ...


def scan(
    scope: ScopeDir, folder: Path, known: Mapping[str, Listed], *, skip: bool
) -> tuple[list[tuple[str, int, Problem | None]], list[str]]:
    """(files to look at, or the problem with each; the known files left out). `known`: the
    catalog's entry of each file it has read (its inode). With `skip`, a known file listed with the inode it
    had is left out: a relisting of 100,000 files after one rename then hands on only what
    changed."""
    reason = unsafe(scope, folder)
    if reason is not None:  # a link leading outside the scope: nothing in it is read
        return [(str(folder), 0, Problem("ENGRAM_UNSAFE_PATH", scope.display(folder), reason))], []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return [], []
    except OSError as exc:  # not a folder, unreadable, a link loop (ELOOP) on the way to it
        reason = "is not a folder" if isinstance(exc, NotADirectoryError) else "cannot be read"
        problem = Problem("ENGRAM_CORRUPT", scope.display(folder), f"{reason}; nothing in it is loaded")
        return [(str(folder), 0, problem)], []
    found: list[tuple[str, int, Problem | None]] = []
    unchanged: list[str] = []
    for entry in entries:
        path = entry.path
        cached = known.get(path)
        if cached is not None and not entry.is_symlink():  # checked when first seen
            if skip and cached.inode == entry.inode():
                unchanged.append(path)
            else:
                found.append((path, entry.inode(), None))
            continue
        name = entry.name
        if not name.endswith(".md") or name.startswith("."):
            continue
        link = entry.is_symlink()
        regular = not link and entry.is_file(follow_symlinks=False)
        found.append(_judged(scope, folder, entry.path, name, link, regular, entry.inode()))
    return found, unchanged


def look(scope: ScopeDir, folder: Path, name: str) -> tuple[str, int, Problem | None] | None:
    """One name a change notification gave, judged as `scan` judges a listed file; None when
    it is no memory file's name or is gone."""
    if not name.endswith(".md") or name.startswith(".") or "/" in name:
        return None
    path = os.path.join(folder, name)
    try:
        stat = os.lstat(path)
    except OSError:
        return None
    link = S_ISLNK(stat.st_mode)
    return _judged(scope, folder, path, name, link, S_ISREG(stat.st_mode), stat.st_ino)


def _judged(
    scope: ScopeDir, folder: Path, path: str, name: str, link: bool, regular: bool, inode: int
) -> tuple[str, int, Problem | None]:
    """(path, inode, None) for a memory file to read, or (path, 0, why it is refused)."""
    if link:
        shown = listed(scope, folder, name)
        return path, 0, Problem("ENGRAM_REFUSED", shown, "symbolic links are not followed; skipped")
    if not is_valid_id(name[:-3]):
        shown = listed(scope, folder, name)
        return path, 0, Problem("ENGRAM_VALIDATION", shown, "file name is not a memory id; skipped")
    if regular:
        return path, inode, None
    # a FIFO, device or folder by a memory's name: never opened, but said
    return path, 0, Problem("ENGRAM_CORRUPT", scope.display(Path(path)), NOT_REGULAR)


def listed(scope: ScopeDir, folder: Path, name: str) -> str:
    """A listed file's name as a problem shows it: a name that is not a plain file name
    (spaces, a sentence, 200 characters of instructions) is described, not quoted, since a
    problem reaches the agent outside any fence."""
    if _PLAIN_FILE.fullmatch(name):
        return scope.display(folder / name)
    return f"{scope.display(folder)}/(a file with a name engram does not quote)"
