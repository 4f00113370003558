"""A memory folder's listing (store.read.catalog): which files to read, and what is refused
before any is opened (a link leading out of the scope, a name that is no memory id, a FIFO)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Protocol

from store.errors import Problem
from store.files.ids import is_valid_id
from store.files.workspace import ScopeDir, unsafe

_PLAIN_FILE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}\.md")
NOT_REGULAR: Final = "not a regular file (a FIFO, device or folder); skipped, never opened"


class Listed(Protocol):
    inode: int


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
        shown = listed(scope, folder, name)
        if entry.is_symlink():
            found.append(
                (
                    entry.path,
                    0,
                    Problem("ENGRAM_REFUSED", shown, "symbolic links are not followed; skipped"),
                )
            )
        elif not is_valid_id(name[:-3]):
            found.append(
                (
                    entry.path,
                    0,
                    Problem("ENGRAM_VALIDATION", shown, "file name is not a memory id; skipped"),
                )
            )
        elif entry.is_file(follow_symlinks=False):
            found.append((entry.path, entry.inode(), None))
        else:  # a FIFO, device or folder by a memory's name: never opened, but said
            found.append(
                (entry.path, 0, Problem("ENGRAM_CORRUPT", scope.display(Path(entry.path)), NOT_REGULAR))
            )
    return found, unchanged


def listed(scope: ScopeDir, folder: Path, name: str) -> str:
    """A listed file's name as a problem shows it: a name that is not a plain file name
    (spaces, a sentence, 200 characters of instructions) is described, not quoted, since a
    problem reaches the agent outside any fence."""
    if _PLAIN_FILE.fullmatch(name):
        return scope.display(folder / name)
    return f"{scope.display(folder)}/(a file with a name engram does not quote)"
