"""Routing (SPEC §3.2): a task class, then memories in load order — core, class, relevant, path.

A session start, which has no task, routes by what the working tree says: store.read.session.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from store.code.globs import glob_match
from store.files.fs_platform import slashed
from store.files.memory import DURABLE_TYPES, Memory
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
_PATH_RE: Final = re.compile(r"(?:[\w.\-]+[/\\])+[\w.\-]*|[\w\-]+\.[A-Za-z0-9]{1,8}\b")
"""A path a task names: folders and a name, or a file name; `\\` separates folders too (Windows)."""


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
    scores: Mapping[str, float] = field(default_factory=dict)
    """The task's scores by id, of the hits the entries leave out too (`unrouted` orders them)."""


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
    """The paths a task names, `/`-separated (store.files.fs_platform: `src\\app.py` is `src/app.py`)."""
    return list(dict.fromkeys(slashed(m.group()).rstrip(".") for m in _PATH_RE.finditer(task)))


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
    return RoutePlan(task_class, tuple(entries.values()), bm25)


def unrouted(plan: RoutePlan, pool: RoutePool) -> list[RouteEntry]:
    """The pool's memories `plan` leaves out, best task score first, then by id: what a load of
    a store that fits the budget shows after the plan (tier `rest`; roles limit only core and
    class, SPEC §4.5)."""
    taken = {entry.memory.id for entry in plan.entries}
    rest = [m for m in pool.memories if m.id not in taken]  # pool order: by id
    rest.sort(key=lambda m: -plan.scores.get(m.id, 0.0))  # stable: ties stay in id order
    entries: list[RouteEntry] = []
    for memory in rest:
        score = plan.scores.get(memory.id, 0.0)
        said = f"rest of the store: bm25 {score:.2f}" if score else "rest of the store"
        entries.append(RouteEntry(memory, score, "rest", said))
    return entries
