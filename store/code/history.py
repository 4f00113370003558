"""A memory's history: its supersede chain both ways, and its file's git log where git is there.

The chain follows `supersedes: [ids]` back and `superseded_by: id` forward, and also the
other side of each link (a memory naming this one in its `supersedes`; one whose
`superseded_by` names it), so a chain merged from two branches is whole even when one side
of a link was written by hand. Superseded, retired and expired memories are all part of it.
Oldest first; the cycle a hand edit could make is walked once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from store.errors import NotFound
from store.files.git import run_git
from store.files.ids import check_id
from store.files.memory import Memory

MAX_CHAIN: Final = 200
MAX_COMMITS: Final = 50


@dataclass(frozen=True, slots=True)
class Commit:
    hash: str
    date: str
    author: str
    subject: str


@dataclass(frozen=True, slots=True)
class History:
    id: str
    chain: tuple[Memory, ...]
    """Oldest first; the memory asked for is among them."""
    commits: tuple[Commit, ...] | None
    """The file's git log, newest first; None where git is not there."""


def _ids(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def chain(memories: Mapping[str, Memory], memory_id: str) -> tuple[Memory, ...]:
    """The supersede chain of `memory_id` among `memories` (one scope's durable memories)."""
    older: dict[str, set[str]] = {m: set() for m in memories}
    newer: dict[str, set[str]] = {m: set() for m in memories}
    for mid, memory in memories.items():
        meta = memory.meta
        for old in _ids(meta.get("supersedes")):
            if old in memories:
                older[mid].add(old)
                newer[old].add(mid)
        for new in _ids(meta.get("superseded_by")):
            if new in memories:
                newer[mid].add(new)
                older[new].add(mid)
    seen = {memory_id}
    frontier = [memory_id]
    while frontier and len(seen) < MAX_CHAIN:
        current = frontier.pop()
        for other in sorted(older[current] | newer[current]):
            if other not in seen:
                seen.add(other)
                frontier.append(other)
    depth = {memory_id: 0}
    order = [memory_id]
    for mid in order:  # breadth first, older negative and newer positive
        for old in sorted(older[mid]):
            if old in seen and old not in depth:
                depth[old] = depth[mid] - 1
                order.append(old)
        for new in sorted(newer[mid]):
            if new in seen and new not in depth:
                depth[new] = depth[mid] + 1
                order.append(new)
    ranked = sorted(depth, key=lambda m: (depth[m], str(memories[m].meta.get("created", "")), m))
    return tuple(memories[m] for m in ranked)


def git_log(workspace: Path, path: Path) -> tuple[Commit, ...] | None:
    """The commits that touched `path`, newest first (not followed through renames: engram
    never renames a memory file, and a superseding memory would look like a copy of the old)."""
    out = run_git(workspace, "log", f"-n{MAX_COMMITS}", "--format=%h%x1f%cs%x1f%an%x1f%s", "--", str(path))
    if out is None:
        return None
    commits = []
    for line in out.splitlines():
        parts = line.split("\x1f")
        if len(parts) == 4:
            commits.append(Commit(*parts))
    return tuple(commits)


def history(snapshots: Iterable[Any], workspace: Path, memory_id: object, scope: str = "project") -> History:
    """The history of a durable memory of `scope` (every status counts). Raises NotFound."""
    wanted = check_id(memory_id)
    memories = {m.id: m for s in snapshots for m in s.memories if m.tier == "durable" and m.scope == scope}
    if wanted not in memories:
        raise NotFound(f"no memory with id {wanted!r} in the {scope} scope: `engram search` finds ids")
    found = chain(memories, wanted)
    memory = memories[wanted]
    commits = git_log(workspace, Path(memory.path)) if memory.path else None
    return History(wanted, found, commits)
