"""What reads see at one instant (store.store.Store.view): each scope's visible memories merged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.errors import Problem
from store.files.memory import Memory
from store.read.snapshot import Broken, Snapshot


@dataclass(frozen=True, slots=True)
class View:
    """What reads see at one instant: durable memories by id (project shadows user), live notes."""

    durable: dict[str, Memory]
    notes: dict[str, Memory]
    problems: tuple[Problem, ...]
    snapshots: tuple[Snapshot, ...]
    key: tuple[Any, ...]
    """Catalog versions and the day: equal keys mean equal views."""

    def everything(self) -> list[Memory]:
        return [*self.durable.values(), *self.notes.values()]

    @property
    def broken(self) -> list[Broken]:
        """The memory files of both scopes that engram could not use, project first."""
        return [b for s in self.snapshots for b in s.broken]

    def broken_file(self, memory_id: str) -> Broken | None:
        """The unusable file with that id, when no memory has it (project first, durable first)."""
        found = [b for b in self.broken if b.id == memory_id]
        return min(found, key=lambda b: b.tier != "durable", default=None)
