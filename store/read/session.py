"""A session start (SPEC §10): it has no task, so it routes by what the working tree says.

`working_tree` reads the branch, the recent commit subjects and the changed and staged files
(never through a git command that reads the working tree); `session_route` routes by them, the
project's rules right after the core tier; `whole_store` is the order a store small enough to
show whole is loaded in; the why-lines say in plain words which of the two happened.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from store.code.globs import glob_match
from store.code.refs import ref_path
from store.files.fs_platform import slashed
from store.files.git import run_git
from store.files.memory import Memory
from store.plurals import count as plural_count
from store.read.load import Why, count_tokens
from store.read.route import RouteEntry, RoutePlan, RoutePool, for_role, route

GIT_SECONDS: Final = 1.0
"""Seconds each of the session's three git calls may take (a session start never waits on git)."""
COMMITS: Final = 5
"""How many recent commit subjects route a session."""
MAX_CHANGED: Final = 200
"""Changed files a session routes by, at most (a tree in the middle of a big rewrite)."""
RULE_TYPES: Final = ("rule", "convention")
"""The types that are the project's rules: they reach every session without `always`."""
SESSION_RULES: Final = 12
"""Project rules with no `paths` that a routed session puts right after the core tier; those
whose `paths` match a changed file always go, and the others still come by their tiers."""
_QUIET_BRANCHES: Final = frozenset(("main", "master", "develop", "dev", "trunk", "head", "default"))


@dataclass(frozen=True, slots=True)
class WorkingTree:
    """What the working tree says about the task: as git wrote it, hostile (shown only through
    store.safety.untrusted, counted or matched otherwise)."""

    branch: str = ""
    subjects: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    @property
    def branch_words(self) -> str:
        """`fix/invoice-rounding` → "fix invoice rounding"; the quiet branches say nothing."""
        if self.branch.lower() in _QUIET_BRANCHES:
            return ""
        return " ".join(part for part in re.split(r"[/_.\-]+", self.branch) if part)

    @property
    def words(self) -> str:
        """The task words: the branch's, then the commit subjects."""
        return "; ".join(part for part in (self.branch_words, *self.subjects) if part)


def working_tree(workspace: Path) -> WorkingTree:
    """The branch and the last commit subjects (one `git log`), and the files changed or staged
    against HEAD under `workspace`; an empty tree where git has nothing to say.

    No git command here reads the working tree: comparing it (`git diff-index HEAD`,
    `ls-files -m`, `status`) hashes a racily clean file through the clean filter a hostile
    `.git/config` names, and that runs its program (store.files.git). Staged files come from
    `diff-index --cached` (HEAD against the index), edited ones from comparing each index
    entry's recorded size and mtime (`ls-files --debug`) with the file's own `stat`."""
    out = run_git(
        workspace, "log", "--no-color", f"-{COMMITS}", "--format=%D%x1f%s", "HEAD", "--", timeout=GIT_SECONDS
    )
    rows = [row.split("\x1f", 1) for row in (out or "").splitlines()]
    subjects = tuple(row[1].strip() for row in rows if len(row) == 2 and row[1].strip())
    refs = rows[0][0] if rows else ""  # the first commit's decoration: "HEAD -> fix/x, origin/fix/x"
    branch = refs.removeprefix("HEAD -> ").split(",")[0].strip() if refs.startswith("HEAD -> ") else ""
    staged = run_git(
        workspace,
        "diff-index",
        "--cached",
        "--name-only",
        "-z",
        "--relative",
        "--no-renames",
        "--ignore-submodules",
        "HEAD",
        "--",
        timeout=GIT_SECONDS,
    )
    entries = run_git(workspace, "ls-files", "-z", "--debug", "--", timeout=GIT_SECONDS)
    found = [p for p in (staged or "").split("\0") if p]
    found += edited(workspace, entries or "")
    paths = tuple(sorted(set(found)))[:MAX_CHANGED]
    return WorkingTree(branch, subjects, paths)


_DEBUG_LINES: Final = 5
"""Lines of stat data `git ls-files --debug` prints after each path (ctime, mtime, dev/ino,
uid/gid, size/flags)."""


def edited(workspace: Path, listing: str) -> list[str]:
    """The tracked files under `workspace` whose size or mtime differs from what the index
    recorded (or that are gone), read from `git ls-files -z --debug` output. An entry git
    marked racily clean (size 0 in the index) counts as edited: a routing hint may say too
    much, never run anything."""
    chunks = listing.split("\0")
    paths, blocks = [chunks[0]], []
    for chunk in chunks[1:]:
        lines = chunk.split("\n", _DEBUG_LINES)
        if len(lines) <= _DEBUG_LINES:
            break  # the last block, or output git did not shape as expected
        blocks.append(lines[:_DEBUG_LINES])
        paths.append(lines[_DEBUG_LINES])
    changed = []
    for path, block in zip(paths, blocks, strict=False):
        recorded = _stat_fields(block)
        if recorded is None or not path:
            continue
        try:
            now = (workspace / path).lstat()
        except OSError:
            changed.append(path)
            continue
        mtime = now.st_mtime_ns
        if not recorded[1] % 1_000_000_000:  # a git built without nanoseconds records whole seconds
            mtime -= mtime % 1_000_000_000
        if (now.st_size, mtime) != recorded:
            changed.append(path)
        if len(changed) >= MAX_CHANGED:
            break
    return changed


def _stat_fields(block: list[str]) -> tuple[int, int] | None:
    """(size, mtime in ns) of one `--debug` block; None when it does not parse."""
    fields: dict[str, str] = {}
    for line in block:
        for part in line.split("\t"):
            key, _, value = part.strip().partition(": ")
            fields[key] = value
    seconds, _, nanos = fields.get("mtime", "").partition(":")
    try:
        return int(fields.get("size", "")), int(seconds) * 1_000_000_000 + int(nanos)
    except ValueError:
        return None


class _Changed:
    """The changed files, matched against the globs and refs of many memories: each pattern
    once, a literal one (most refs) by a set lookup."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = tuple(p.removeprefix("./") for p in paths)
        self._literal = frozenset(self.paths)
        self._seen: dict[str, str | None] = {}

    def hit(self, pattern: str) -> str | None:
        """The first changed path `pattern` matches, or None."""
        if pattern not in self._seen:
            if "*" in pattern or "?" in pattern:
                self._seen[pattern] = next((p for p in self.paths if glob_match(p, pattern)), None)
            else:
                literal = slashed(pattern).removeprefix("./")
                self._seen[pattern] = literal if literal in self._literal else None
        return self._seen[pattern]

    def match(self, memory: Memory) -> tuple[str, str] | None:
        """(changed path, the glob or ref it matches) for the memory's first pattern that applies."""
        for pattern in (*memory.paths, *(ref_path(r) for r in memory.refs)):
            path = self.hit(pattern) if pattern else None
            if path is not None:
                return path, pattern
        return None


def session_route(
    words: str,
    paths: Iterable[str],
    pool: RoutePool,
    *,
    role: str,
    classes: Mapping[str, Mapping[str, list[str]]],
    scores: Callable[[str], dict[str, float]],
    quote: Callable[[str], str],
) -> RoutePlan:
    """A session's load order: the core tier; the project's rules (those whose paths or refs
    match a changed file, then up to SESSION_RULES with no paths, best scored first); every
    other memory a changed file matches; then `route(words)`'s class, relevant and path tiers.
    `quote` shows a changed path (hostile) in a reason."""
    plan = route(words, pool, role=role, classes=classes, scores=scores)
    score = {e.memory.id: e.score for e in plan.entries}
    rank = {e.memory.id: n for n, e in enumerate(plan.entries)}
    changed = _Changed(paths)
    entries: dict[str, RouteEntry] = {e.memory.id: e for e in plan.entries if e.tier == "core"}
    matched: list[tuple[Memory, str]] = []
    for memory in pool.memories:
        if memory.id in entries or not for_role(memory, role):
            continue
        hit = changed.match(memory) if changed.paths and (memory.paths or memory.refs) else None
        if hit is not None:
            matched.append((memory, f"changed file {quote(hit[0])} matches {quote(hit[1])}"))
    rules = [(m, why) for m, why in matched if m.type in RULE_TYPES and m.scope == "project"]
    loose = sorted(
        (
            m
            for m in pool.memories
            if m.type in RULE_TYPES and m.scope == "project" and not m.paths and for_role(m, role)
        ),
        key=lambda m: (-score.get(m.id, 0.0), rank.get(m.id, len(rank)), m.id),
    )
    for memory, why in rules:
        entries.setdefault(memory.id, RouteEntry(memory, score.get(memory.id, 0.0), "rules", f"rules: {why}"))
    for memory in loose[:SESSION_RULES]:
        entries.setdefault(
            memory.id, RouteEntry(memory, score.get(memory.id, 0.0), "rules", "rules: a project rule")
        )
    for memory, why in matched:
        entries.setdefault(memory.id, RouteEntry(memory, score.get(memory.id, 0.0), "path", f"path: {why}"))
    for entry in plan.entries:
        entries.setdefault(entry.memory.id, entry)
    return RoutePlan(plan.task_class, tuple(entries.values()))


def whole_store(pool: RoutePool, plan: RoutePlan, *, role: str) -> tuple[RouteEntry, ...]:
    """Every memory of the pool the role sees, the most useful first: rules and conventions,
    gotchas, the core tier, then in `plan`'s order, then by id."""
    rank = {e.memory.id: n for n, e in enumerate(plan.entries)}
    score = {e.memory.id: e.score for e in plan.entries}

    def key(memory: Memory) -> tuple[int, int, int, str]:
        n = rank.get(memory.id, len(rank))
        group = (
            0 if memory.type in RULE_TYPES else 1 if memory.type == "gotcha" else 2 if memory.always else 3
        )
        return (group, 0 if memory.always else 1, n, memory.id)

    shown = sorted((m for m in pool.memories if for_role(m, role)), key=key)
    return tuple(
        RouteEntry(
            m, score.get(m.id, 0.0), "whole", f"whole store: {m.type}" + (", always" if m.always else "")
        )
        for m in shown
    )


def whole_why(count: int) -> Why:
    """The why-line of a store small enough to show whole (`count` memories)."""

    def why(bodies: int, cards: int, tokens: int) -> str:
        if bodies >= count:
            return (
                f"the store is small ({plural_count(count, 'memory')}, {tokens:,} tokens): "
                "loaded all of it, rules and gotchas first."
            )
        return (
            f"the store is small ({plural_count(count, 'memory')}): loaded all of it, "
            f"{bodies:,} as bodies (rules and gotchas first), the other {count - bodies:,} as cards."
        )

    return why


_PLAIN_BRANCH: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,59}")


def _branch(name: str) -> str:
    """How the why-line names the branch: quoted, as the data it is, when it looks like a
    branch name (letters, digits, `._/-`, at most 60); otherwise unnamed. A clone chooses its
    branch names, and the line is engram's own words in front of the agent."""
    if _PLAIN_BRANCH.fullmatch(name):
        return f'branch "{name}"'
    return "the branch name"


def routed_why(tree: WorkingTree, objective: str, total: int) -> Why:
    """The why-line of a session routed by the objective and what the working tree says."""
    sources = ["the session objective"] if objective.strip() else []
    if tree.branch_words and not objective.strip():
        sources.append(_branch(tree.branch))
    if tree.paths:
        sources.append(plural_count(len(tree.paths), "changed file"))
    if tree.subjects and not objective.strip():
        sources.append(plural_count(len(tree.subjects), "recent commit"))
    said = (
        "routed by " + (", ".join(sources[:-1]) + " and " if len(sources) > 1 else "") + sources[-1]
        if sources
        else "no session objective, branch, changed file or commit to route by"
    )

    def why(bodies: int, cards: int, tokens: int) -> str:
        if not total:
            return "the store has no memories yet: nothing to load."
        shown = f"{bodies + cards:,} of {plural_count(total, 'memory')}"
        return f"{said}: {shown}" + (", the project's rules first." if bodies + cards else ".")

    return why


def cards_fit(memories: Iterable[Memory], room: int) -> bool:
    """Whether every memory's card fits in `room` tokens (the cheap test before a whole-store
    load is tried: a store whose cards alone overflow is routed instead)."""
    used = 0
    for memory in memories:
        used += count_tokens(memory.card + "\n")
        if used > room:
            return False
    return True
