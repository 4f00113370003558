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


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Every parsed memory of one scope at one instant, plus the files that failed."""

    memories: tuple[Memory, ...]
    problems: tuple[Problem, ...]
    version: int
    broken: tuple[Broken, ...] = ()
    """The failed files that name a memory id (a subset of `problems`, by id)."""


def memory_key(memory: Memory) -> str:
    return f"{memory.tier}/{memory.id}"
