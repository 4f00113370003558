"""What a catalog knows of one memory file (store.read.catalog)."""

from __future__ import annotations

from typing import NamedTuple

from store.errors import Problem
from store.files.memory import Memory


class Entry(NamedTuple):
    """What the catalog knows of one file (a tuple: made 100,000 times when a process starts)."""

    mtime_ns: int
    size: int
    inode: int
    memory: Memory | None
    problem: Problem | None
    tier: str = "durable"
    parsed: bool = True
    """With `problem`: the bytes were read and failed to parse (False: never read)."""
