"""What a catalog holds of one scope at one instant (store.read.catalog): its parsed memories,
and the memory files it could not use."""

from __future__ import annotations

from dataclasses import dataclass

from store.errors import Conflict, CorruptMemory, Problem
from store.files.memory import Memory


@dataclass(frozen=True, slots=True)
class Broken:
    """A memory file engram could not use, named by the id its file name gives (one
    story everywhere: `list` marks it, `show` and a load by id answer ENGRAM_CORRUPT with its
    problem, `verify` says it does not parse and `verify --accept` keeps its last record)."""

    scope: str
    tier: str
    id: str
    problem: Problem
    parsed: bool = True
    """Its bytes were read and failed to parse (False: never read, such as a link or a FIFO)."""

    @property
    def key(self) -> str:
        """The catalog's key of the file, as `memory_key` gives a parsed one's."""
        return f"{self.tier}/{self.id}"

    @property
    def verdict(self) -> str:
        """What is wrong, in two words a person reads before the problem itself."""
        return "does not parse" if self.parsed else "cannot be read"

    def error(self) -> CorruptMemory:
        """What a read of this id by name answers (`engram show`, a load by id): not NotFound,
        but ENGRAM_CORRUPT (ENGRAM_CONFLICT for git's conflict markers) with the problem."""
        kind = Conflict if self.problem.code == Conflict.code else CorruptMemory
        return kind(
            f"{self.problem.file} {self.verdict}: {self.problem.message}. engram leaves the file "
            "untouched: fix it by hand"
        )


class Snapshot:
    """Every parsed memory of one scope at one instant, plus the files that failed. Given the
    catalog's table (a copy, by path), the tuple of memories is made when first asked for: the
    view after one change takes the change alone and never walks 100,000 memories."""

    __slots__ = ("_table", "_memories", "problems", "version", "broken")

    def __init__(
        self,
        memories: tuple[Memory, ...] | dict[str, Memory],
        problems: tuple[Problem, ...],
        version: int,
        broken: tuple[Broken, ...] = (),
    ) -> None:
        self._table = memories if isinstance(memories, dict) else None
        self._memories = memories if isinstance(memories, tuple) else None
        self.problems = problems
        self.version = version
        self.broken = broken
        """The failed files that name a memory id (a subset of `problems`, by id)."""

    @property
    def memories(self) -> tuple[Memory, ...]:
        if self._memories is None:
            assert self._table is not None
            self._memories = tuple(self._table.values())
            self._table = None
        return self._memories


def memory_key(memory: Memory) -> str:
    return f"{memory.tier}/{memory.id}"
