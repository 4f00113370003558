"""One memory as its page shows it: the memory a page address names, its front matter, its refs
with their state now, and its history (the supersede chain, and git's commits of its file with
their diffs).

A page address names a memory as reads do (store.code.staleness.key): `id` (the project's),
`user:id`, `note:id`. The id is checked with store.files.ids.check_id, as the CLI checks it,
before anything is looked up, so no path is built from anything else. Expired memories have a
page too (reads leave them out; the list marks them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from store.code.history import Commit, history
from store.code.refs import memory_refs
from store.code.staleness import Mark, checker
from store.code.validity import current
from store.errors import NotFound
from store.files.git import repository, run_git
from store.files.ids import check_id
from store.files.memory import Memory
from store.store import Store
from store.write import curate

DIFF_LIMIT: Final = 20_000
"""Characters of one commit's diff shown (the rest is named)."""
DIFF_COMMITS: Final = 10
"""The newest commits whose diffs are shown (the log lists up to store.code.history.MAX_COMMITS)."""
_HASH: Final = re.compile(r"[0-9a-f]{4,64}")


@dataclass(frozen=True, slots=True)
class RefState:
    text: str
    problem: str
    """Why it no longer resolves ("" when it does); `checked` False: not checked at all."""
    checked: bool = True


@dataclass(frozen=True, slots=True)
class Change:
    commit: Commit
    diff: str | None
    """The commit's change to the file; None when not shown (older than DIFF_COMMITS)."""


@dataclass(frozen=True, slots=True)
class MemoryPage:
    memory: Memory
    key: str
    file: str
    meta: dict[str, Any]
    body: str
    refs: list[RefState]
    marks: tuple[Mark, ...]
    expired: bool
    chain: tuple[Memory, ...]
    changes: list[Change] | None
    """None where git is not there."""
    curated: bool
    """Retire and restore act on this memory (what `engram forget ID` would name)."""


def address(name: str) -> tuple[str, str, str]:
    """(scope, tier, id) of a page address (`id`, `user:id`, `note:id`). InvalidId (the CLI's
    check) when the id is none."""
    scope, tier, wanted = "project", "durable", name
    if name.startswith("user:"):
        scope, wanted = "user", name.removeprefix("user:")
    elif name.startswith("note:"):
        tier, wanted = "working", name.removeprefix("note:")
    return scope, tier, check_id(wanted)


def lookup(store: Store, name: str) -> Memory:
    """The memory a page address names. InvalidId (the CLI's check) or NotFound."""
    scope, tier, wanted = address(name)
    view = store.view()
    if tier == "working":
        note = view.notes.get(wanted)
        if note is not None:
            return note
    else:
        for snapshot in view.snapshots:
            for memory in snapshot.memories:
                if memory.id == wanted and memory.scope == scope and memory.tier == "durable":
                    return memory
        if (broken := view.broken_file(wanted)) is not None and broken.scope == scope:
            raise broken.error()
    raise NotFound(f"no memory {name!r}: the list of memories shows every one")


def memory_page(store: Store, name: str) -> MemoryPage:
    memory = lookup(store, name)
    today = store.view().key[-1]
    _, meta, body = curate.read_file(store, memory)
    file = curate.file_name(store, memory)
    marks = store.marks([memory])
    key = name if ":" in name or memory.scope == "project" else f"user:{memory.id}"
    refs = _ref_states(store, memory)
    chain: tuple[Memory, ...] = ()
    changes: list[Change] | None = None
    if memory.tier == "durable":
        found = history(store.view().snapshots, store.workspace, memory.id, memory.scope)
        chain = found.chain if len(found.chain) > 1 else ()
        if found.commits is not None and memory.path:
            changes = [
                Change(c, _diff(store, c, Path(memory.path)) if n < DIFF_COMMITS else None)
                for n, c in enumerate(found.commits)
            ]
        elif repository(store.workspace) is not None:
            changes = []  # a repository git has nothing to say about yet (no commit at all)
    try:
        curated = curate.find(store, memory.id) is memory
    except NotFound:
        curated = False
    return MemoryPage(
        memory,
        key,
        file,
        meta,
        body,
        refs,
        next(iter(marks.values()), ()),
        memory.tier == "durable" and not current(memory, today),
        chain,
        changes,
        curated and memory.tier == "durable",
    )


def _ref_states(store: Store, memory: Memory) -> list[RefState]:
    """Each ref as written, and why it no longer resolves (a user memory's are not checked: its
    paths belong to whichever workspace it is read in)."""
    if memory.scope != "project":
        return [RefState(text, "", checked=False) for text in memory.refs]
    looking = checker(store.workspace)
    return [RefState(ref.text, looking.problem(ref)) for ref in memory_refs(memory.refs)]


def _diff(store: Store, commit: Commit, path: Path) -> str | None:
    """What `commit` changed in `path` (git's patch, no colour, no external diff or text
    conversion), at most DIFF_LIMIT characters; None when git cannot say."""
    if _HASH.fullmatch(commit.hash) is None:
        return None
    out = run_git(
        store.workspace,
        "show",
        "--format=",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--patch",
        commit.hash,
        "--",
        str(path),
    )
    if out is None:
        return None
    if len(out) > DIFF_LIMIT:
        return out[:DIFF_LIMIT] + f"\n… ({len(out) - DIFF_LIMIT} more characters not shown)"
    return out
