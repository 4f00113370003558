"""A person's edit that could not be written, kept so it is not lost (`engram edit`
threw the whole edit away on a validation error).

An edit engram refuses (it would not load, it is not UTF-8, it holds an invisible character, or
the file changed meanwhile) is kept under `$ENGRAM_HOME/edits/`, the user's own folder (never
the workspace: nothing there travels through git or is read as a memory), mode 0600 (the text
has not been redacted yet). Its name carries the workspace, the memory and the sha256 of the
file it was made from, so `engram edit ID` reopens it only over that same file: when the file
changed since, the edit starts from the file as it is now and the kept text is named, to copy
from by hand. A successful edit removes what was kept.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from store.files.fsutil import read_regular, write_atomic
from store.files.memory import MAX_FILE_BYTES, Memory
from store.write.approvals import fingerprint

if TYPE_CHECKING:
    from store.store import Store

FOLDER: Final = "edits"
MODE: Final = 0o600


@dataclass(frozen=True, slots=True)
class Kept:
    """What was kept of an earlier edit of this memory."""

    path: Path
    text: bytes | None
    """The edit, when it was made from the file as it is now (None: from an earlier version)."""


def _prefix(store: Store, memory: Memory) -> str:
    return f"{fingerprint(store.workspace)}-{memory.scope}-{memory.tier}-{memory.id}-"


def _path(store: Store, memory: Memory, original: bytes) -> Path:
    base = hashlib.sha256(original).hexdigest()[:16]
    return store.user.root / FOLDER / f"{_prefix(store, memory)}{base}.md"


def keep(store: Store, memory: Memory, original: bytes, edited: bytes) -> Path:
    """Keep `edited` (made from `original`) for the next `engram edit`; its path."""
    path = _path(store, memory, original)
    write_atomic(path, edited, mode=MODE, sync_dir=False)
    return path


def find(store: Store, memory: Memory, original: bytes) -> Kept | None:
    """The edit kept for this memory: its text when it was made from `original`, else only
    where it is (the newest, when several were)."""
    exact = _path(store, memory, original)
    with contextlib.suppress(OSError):
        return Kept(exact, read_regular(exact, MAX_FILE_BYTES))
    folder = store.user.root / FOLDER
    try:
        others = sorted(folder.glob(_prefix(store, memory) + "*.md"), key=_mtime)
    except OSError:
        return None
    return Kept(others[-1], None) if others else None


def drop(store: Store, memory: Memory, original: bytes) -> None:
    """The edit made from `original` was written: what was kept of it goes."""
    with contextlib.suppress(OSError):
        _path(store, memory, original).unlink()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
