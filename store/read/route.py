"""Routing (SPEC §3.2): a task class, then memories in load order — core, class, relevant, path.

A session start has no task (SPEC §10): `working_tree` reads what the tree says (the branch,
the recent commit subjects, the changed and staged files) and `session_route` routes by it, the
project's rules right after the core tier; `whole_store` is the order a store small enough to
show whole is loaded in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, NamedTuple

from store.code.globs import glob_match
from store.files.git import run_git
from store.files.memory import DURABLE_TYPES, Memory
from store.read.load import Why, count_tokens
from store.search.tokenize import tokenize

BUILTIN_CLASSES: Final[dict[str, dict[str, list[str]]]] = {
    "bugfix": {
        "keywords": [
            "bug",
            "fix",
            "fixes",
            "error",
            "crash",
            "fails",
            "failing",
            "broken",
            "regression",
            "exception",
            "traceback",
            "flaky",
            "wrong",
        ],
        "tags": ["debugging", "bugs"],
        "types": ["gotcha"],
    },
    "feature": {
        "keywords": ["add", "implement", "feature", "new", "support", "build", "create", "introduce"],
        "tags": ["api", "frontend"],
        "types": ["convention", "decision"],
    },
    "refactor": {
        "keywords": ["refactor", "rename", "cleanup", "restructure", "simplify", "extract", "reorganize"],
        "tags": ["style"],
        "types": ["convention"],
    },
    "test": {
        "keywords": ["test", "tests", "testing", "pytest", "coverage", "fixture", "assert", "e2e", "unit"],
        "tags": ["testing", "tests"],
        "types": [],
    },
    "docs": {
        "keywords": ["doc", "docs", "documentation", "readme", "docstring", "guide", "tutorial"],
        "tags": ["docs"],
        "types": [],
    },
    "review": {
        "keywords": ["review", "pr", "approve", "feedback", "audit", "critique"],
        "tags": ["review"],
        "types": ["rule", "preference"],
    },
    "release": {
        "keywords": ["release", "publish", "changelog", "version", "bump", "tag", "ship"],
        "tags": ["release"],
        "types": ["procedure"],
    },
    "ops": {
        "keywords": [
            "deploy",
            "deployment",
            "ci",
            "pipeline",
            "infra",
            "docker",
            "kubernetes",
            "monitoring",
            "rollback",
            "production",
            "incident",
        ],
        "tags": ["ops", "ci", "deploy"],
        "types": ["procedure"],
    },
}
GENERAL: Final = "general"
RELEVANCE_SHARE: Final = 0.3
"""Beyond the first MIN_RELEVANT, a BM25 hit is relevant when it scores at least this share of
the best hit (SPEC §3.2's floor)."""
MIN_RELEVANT: Final = 5
"""The best BM25 hits that are relevant whatever their share of the best score. The floor keeps
weak matches out of a big store's load; it never drops the best match, nor any hit of a store
small enough that every hit fits (a word in half of 2, 4 or 10 memories finds all of them,
however long some of those memories are)."""
MAX_RELEVANT: Final = 20
CLASS_FIRST: Final = 5
"""How many class members (best task score first) come before the relevant tier; the rest of
the class follows the path tier as tier `class-rest`. A big store's class holds dozens of memories that share
nothing with the task, and listed first they took the whole budget from the memories the task
names (fixtures/eval/tasks.jsonl, tune split: a needed memory arrived as a body for 0.61 of the
tasks with the whole class first)."""
_TYPE_ORDER: Final = {t: i for i, t in enumerate(DURABLE_TYPES)}
_PATH_RE: Final = re.compile(r"(?:[\w.\-]+/)+[\w.\-]*|[\w\-]+\.[A-Za-z0-9]{1,8}\b")


class RouteEntry(NamedTuple):
    """One memory in load order (a tuple: a class tier can hold thousands of them)."""

    memory: Memory
    score: float
    tier: str
    reason: str


@dataclass(frozen=True, slots=True)
class RoutePlan:
    task_class: str
    entries: tuple[RouteEntry, ...]


def task_classes(extra: Mapping[str, Mapping[str, list[str]]]) -> dict[str, dict[str, list[str]]]:
    """Built-in classes merged with config `routes` (lists are extended; new classes added)."""
    merged = {name: {k: list(v) for k, v in spec.items()} for name, spec in BUILTIN_CLASSES.items()}
    for name, spec in extra.items():
        target = merged.setdefault(name, {"keywords": [], "tags": [], "types": []})
        for key in ("keywords", "tags", "types"):
            target[key] = list(dict.fromkeys([*target.get(key, []), *spec.get(key, [])]))
    return merged


def classify(task: str, classes: Mapping[str, Mapping[str, list[str]]]) -> str:
    """The class whose keywords occur most often in the task; ties go to the earlier class."""
    words = set(tokenize(task))
    lowered = " ".join(task.lower().split())
    best, best_hits = GENERAL, 0
    for name, spec in classes.items():
        hits = sum(1 for k in spec.get("keywords", []) if (k in words if " " not in k else k in lowered))
        if hits > best_hits:
            best, best_hits = name, hits
    return best


def named_paths(task: str) -> list[str]:
    return list(dict.fromkeys(m.group().rstrip(".") for m in _PATH_RE.finditer(task)))


def for_role(memory: Memory, role: str) -> bool:
    return not memory.roles or role in memory.roles


@dataclass(frozen=True, slots=True)
class RoutePool:
    """The active durable memories routing chooses from, sorted by id, with what each tier
    asks of them looked up once per store view rather than once per memory per call."""

    memories: tuple[Memory, ...]
    order: dict[str, int]
    core: tuple[Memory, ...]
    by_tag: dict[str, tuple[int, ...]]
    by_type: dict[str, tuple[int, ...]]
    with_paths: tuple[Memory, ...]

    @classmethod
    def of(cls, memories: Iterable[Memory]) -> RoutePool:
        pool = tuple(sorted(memories, key=lambda m: m.id))
        by_tag: dict[str, list[int]] = {}
        by_type: dict[str, list[int]] = {}
        for n, memory in enumerate(pool):
            for tag in set(memory.tags):
                by_tag.setdefault(tag, []).append(n)
            by_type.setdefault(memory.type, []).append(n)
        core = sorted((m for m in pool if m.always), key=lambda m: (_TYPE_ORDER.get(m.type, 99), m.id))
        return cls(
            pool,
            {m.id: n for n, m in enumerate(pool)},
            tuple(core),
            {tag: tuple(ns) for tag, ns in by_tag.items()},
            {type_: tuple(ns) for type_, ns in by_type.items()},
            tuple(m for m in pool if m.paths),
        )


def route(
    task: str,
    pool: RoutePool,
    *,
    role: str,
    classes: Mapping[str, Mapping[str, list[str]]],
    scores: Callable[[str], dict[str, float]],
) -> RoutePlan:
    """Active durable memories for `task`, in load order; each id appears once, first tier wins."""
    task_class = classify(task, classes) if task.strip() else GENERAL
    bm25 = scores(task) if task.strip() else {}
    entries: dict[str, RouteEntry] = {}
    later: list[RouteEntry] = []
    """Class members past the first CLASS_FIRST: tier `class-rest`, after the path tier."""

    def add(memory: Memory, tier: str, reason: str) -> None:
        if memory.id not in entries:
            entries[memory.id] = RouteEntry(memory, bm25.get(memory.id, 0.0), tier, reason)

    for memory in pool.core:
        if for_role(memory, role):
            add(memory, "core", "core: always loaded" + (f" for role {role}" if memory.roles else ""))

    spec = classes.get(task_class, {})
    if task_class != GENERAL:
        tags, types = set(spec.get("tags", [])), set(spec.get("types", []))
        tagged = {n for tag in tags for n in pool.by_tag.get(tag, ())}
        typed = {n for type_ in types for n in pool.by_type.get(type_, ())}
        reasons: dict[tuple[str, ...], str] = {}  # memories share their few tag sets
        by_type = f"class {task_class}: type "
        scored: list[RouteEntry] = []
        unscored: list[RouteEntry] = []  # most class members share no query word: already in id order
        for n in sorted(tagged | typed):  # pool order: by id
            memory = pool.memories[n]
            if memory.id in entries or not for_role(memory, role):
                continue
            if n in tagged:
                reason = reasons.get(memory.tags)
                if reason is None:
                    shared = ", ".join(sorted(tags.intersection(memory.tags)))
                    reason = reasons[memory.tags] = f"class {task_class}: tag {shared}"
            else:
                reason = by_type + memory.type
            score = bm25.get(memory.id, 0.0)
            (scored if score else unscored).append(RouteEntry(memory, score, "class", reason))
        scored.sort(key=lambda entry: -entry.score)  # stable: ties stay in id order
        members = [*scored, *unscored]
        entries.update((entry.memory.id, entry) for entry in members[:CLASS_FIRST])
        later = [entry._replace(tier="class-rest") for entry in members[CLASS_FIRST:]]

    if bm25:
        floor = max(bm25.values()) * RELEVANCE_SHARE
        ranked = sorted(
            (pool.memories[pool.order[i]] for i in bm25 if i in pool.order), key=lambda m: (-bm25[m.id], m.id)
        )
        relevant = [m for n, m in enumerate(ranked) if n < MIN_RELEVANT or bm25[m.id] >= floor]
        for memory in relevant[:MAX_RELEVANT]:
            add(memory, "relevant", f"relevant: bm25 {bm25[memory.id]:.2f}")

    for path in named_paths(task):
        for memory in pool.with_paths:
            pattern = next((p for p in memory.paths if glob_match(path, p)), None)
            if pattern is not None:
                add(memory, "path", f"path: {path} matches {pattern}")

    for entry in later:
        entries.setdefault(entry.memory.id, entry)
    return RoutePlan(task_class, tuple(entries.values()))


# --- a session start: what the working tree says -----------------------------------------
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
        size, mtime = recorded
        nanos = now.st_mtime_ns if mtime % 1_000_000_000 else now.st_mtime_ns // 1_000_000_000 * 1_000_000_000
        if (now.st_size, nanos) != recorded:  # a git built without nanoseconds records whole seconds
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
                literal = pattern.removeprefix("./")
                self._seen[pattern] = literal if literal in self._literal else None
        return self._seen[pattern]

    def match(self, memory: Memory) -> tuple[str, str] | None:
        """(changed path, the glob or ref it matches) for the memory's first pattern that applies."""
        for pattern in (*memory.paths, *(r.split("#", 1)[0] for r in memory.refs)):
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


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def whole_why(count: int) -> Why:
    """The why-line of a store small enough to show whole (`count` memories)."""

    def why(bodies: int, cards: int, tokens: int) -> str:
        if bodies >= count:
            return (
                f"the store is small ({_count(count, 'memory', 'memories')}, {tokens:,} tokens): "
                "loaded all of it, rules and gotchas first."
            )
        return (
            f"the store is small ({_count(count, 'memory', 'memories')}): loaded all of it, "
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
        sources.append(_count(len(tree.paths), "changed file", "changed files"))
    if tree.subjects and not objective.strip():
        sources.append(_count(len(tree.subjects), "recent commit", "recent commits"))
    said = (
        "routed by " + (", ".join(sources[:-1]) + " and " if len(sources) > 1 else "") + sources[-1]
        if sources
        else "no session objective, branch, changed file or commit to route by"
    )

    def why(bodies: int, cards: int, tokens: int) -> str:
        if not total:
            return "the store has no memories yet: nothing to load."
        shown = f"{bodies + cards:,} of {_count(total, 'memory', 'memories')}"
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
