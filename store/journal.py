"""All-or-nothing multi-file writes: a journal written first, applied, then removed.

A commit writes `.engram/journal.json` (atomically) listing every file it will write or
remove, with the new bytes; then applies each through `write_atomic`; then deletes the
journal. A crash before the journal exists changes nothing; a crash after it is rolled
forward by `recover` on the next write or start, so the store is either as before or as after.
Callers hold the workspace lock.
"""

from __future__ import annotations

import base64
import contextlib
import logging
from collections.abc import Sequence
from pathlib import Path

import orjson

from store.fsutil import fsync_dir, write_atomic

log = logging.getLogger("engram.store")

Write = tuple[Path, bytes | None]
"""A file and its new bytes; None removes it."""


def run(journal: Path, writes: Sequence[Write]) -> None:
    """Apply `writes` all or nothing (a single write needs no journal: its rename is atomic)."""
    if len(writes) == 1 and writes[0][1] is not None:
        write_atomic(writes[0][0], writes[0][1])
        return
    entries = [
        {"path": str(path), "data": None if data is None else base64.b64encode(data).decode("ascii")}
        for path, data in writes
    ]
    write_atomic(journal, orjson.dumps({"version": 1, "writes": entries}))
    _apply(writes)
    journal.unlink()


def recover(journal: Path) -> list[Path]:
    """Roll a leftover journal forward; return the files it wrote or removed (none left over: [])."""
    try:
        raw = journal.read_bytes()
    except FileNotFoundError:
        return []
    try:
        entries = orjson.loads(raw)["writes"]
        writes = [
            (Path(e["path"]), None if e["data"] is None else base64.b64decode(e["data"])) for e in entries
        ]
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        log.warning("discarding an unreadable journal %s (it was never applied)", journal.name)
        journal.unlink()
        return []
    _apply(writes)
    journal.unlink()
    log.warning("completed an interrupted commit from %s (%d files)", journal.name, len(writes))
    return [path for path, _ in writes]


def _apply(writes: Sequence[Write]) -> None:
    for path, data in writes:
        if data is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            write_atomic(path, data, sync_dir=False)
    for folder in sorted({path.parent for path, _ in writes}):
        fsync_dir(folder)
