"""The labelled set in fixtures/eval/ and the temp workspaces built from it.

- `fixtures/eval/memory/<id>.md`: project-scope memories, real engram files;
- `fixtures/eval/user/memory/<id>.md`: user-scope memories (copied under $ENGRAM_HOME);
- `fixtures/eval/queries.jsonl`: one query a line, `{id, kind, split, query, labels}` with
  `kind` `keyword | paraphrase | identifier` and `labels` `{memory id: grade}` (2 = the answer,
  1 = relevant; a superseded memory is never labelled: search must not bring it back);
- `fixtures/eval/tiny.json`: stores of 1 to 5 memories with their own queries (kind `tiny`);
- `fixtures/eval/long/memory/<id>.md` and `fixtures/eval/long/queries.jsonl`: the long-document
  set, conversational session notes of 700–1,500 words in a store of their own, with queries of
  kind `long-keyword | long-paraphrase` (written before the sessions);
- `fixtures/eval/noanswer.jsonl`: `{id, split, domain, query}`, questions of other domains that
  no memory of the coding set answers (written before any tuning): search should say no match;
- `fixtures/eval/tasks.jsonl`: one task description a line, `{id, split, task, labels}`: what a
  developer types as a session objective or a ticket title, labelled with the memories someone
  doing that task needs (graded like queries), for `load` (eval/load_eval.py).

Every query and task has a `split`, `tune` or `test`: half of each kind, chosen by the sha256 of
the id (`assign_splits`). Parameters are chosen on `tune` and reported on `test`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.files.memory import render_checked

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "eval"
KINDS = ("keyword", "paraphrase", "identifier")
LONG_KINDS = ("long-keyword", "long-paraphrase")
LONG = FIXTURE / "long"
SPLITS = ("tune", "test")


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    kind: str
    text: str
    labels: dict[str, int]
    split: str = ""
    """`tune` (parameters are chosen on it) or `test` (figures are reported on it)."""


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    split: str
    text: str
    labels: dict[str, int]


def assign_splits(ids: Iterable[str]) -> dict[str, str]:
    """Half of `ids` (the larger half when odd) to `tune`, the rest to `test`, in the order of
    their ids' sha256: deterministic, and unrelated to what the queries say. Used once to write
    the splits into the fixture files; run per kind."""
    order = sorted(ids, key=lambda i: hashlib.sha256(i.encode("utf-8")).hexdigest())
    half = (len(order) + 1) // 2
    return {i: SPLITS[0] if n < half else SPLITS[1] for n, i in enumerate(order)}


def _split(where: str, row: dict[str, Any]) -> str:
    split = row.get("split")
    if split not in SPLITS:
        raise ValueError(f"{where}: split {split!r} is not one of {', '.join(SPLITS)}")
    return str(split)


@dataclass(frozen=True, slots=True)
class TinyStore:
    name: str
    memories: list[dict[str, Any]]
    queries: list[Query]


def load_queries(path: Path = FIXTURE / "queries.jsonl") -> list[Query]:
    queries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row["kind"] not in KINDS:
            raise ValueError(f"{path}:{number}: kind {row['kind']!r} is not one of {', '.join(KINDS)}")
        split = _split(f"{path}:{number}", row)
        queries.append(Query(row["id"], row["kind"], row["query"], dict(row["labels"]), split))
    return queries


def load_long_queries(path: Path = LONG / "queries.jsonl") -> list[Query]:
    queries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if row["kind"] not in LONG_KINDS:
                raise ValueError(
                    f"{path}:{number}: kind {row['kind']!r} is not one of {', '.join(LONG_KINDS)}"
                )
            split = _split(f"{path}:{number}", row)
            queries.append(Query(row["id"], row["kind"], row["query"], dict(row["labels"]), split))
    return queries


def load_noanswer(path: Path = FIXTURE / "noanswer.jsonl") -> list[Query]:
    """The no-answer queries, kind `none`, no labels."""
    queries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            queries.append(Query(row["id"], "none", row["query"], {}, _split(f"{path}:{number}", row)))
    return queries


def load_tasks(path: Path = FIXTURE / "tasks.jsonl") -> list[Task]:
    tasks = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            split = _split(f"{path}:{number}", row)
            tasks.append(Task(row["id"], split, row["task"], dict(row["labels"])))
    return tasks


def load_tiny(path: Path = FIXTURE / "tiny.json") -> list[TinyStore]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        TinyStore(
            store["name"],
            store["memories"],
            [
                Query(
                    f"tiny-{store['name']}-{n}",
                    "tiny",
                    q["query"],
                    dict(q["labels"]),
                    _split(f"{path}: store {store['name']} query {n}", q),
                )
                for n, q in enumerate(store["queries"], 1)
            ],
        )
        for store in data["stores"]
    ]


def build_workspace(root: Path, fixture: Path = FIXTURE) -> tuple[Path, Path]:
    """Copy the set into `root`: returns (workspace, engram home)."""
    workspace, home = root / "workspace", root / "engram-home"
    shutil.copytree(fixture / "memory", workspace / ".engram" / "memory")
    shutil.copytree(fixture / "user" / "memory", home / "memory")
    return workspace, home


def build_long_workspace(root: Path) -> tuple[Path, Path]:
    """The long-document set in a store of its own: returns (workspace, engram home)."""
    workspace, home = root / "workspace", root / "engram-home"
    shutil.copytree(LONG / "memory", workspace / ".engram" / "memory")
    home.mkdir(parents=True)
    return workspace, home


def build_tiny(root: Path, tiny: TinyStore) -> tuple[Path, Path]:
    """Write a tiny store's memories as files (through engram's own renderer, parsed back)."""
    workspace, home = root / f"tiny-{tiny.name}", root / f"tiny-{tiny.name}-home"
    folder = workspace / ".engram" / "memory"
    folder.mkdir(parents=True)
    home.mkdir()
    for memory in tiny.memories:
        meta = {
            "id": memory["id"],
            "type": memory["type"],
            "title": memory["title"],
            "scope": "project",
            "tags": list(memory.get("tags", [])),
            "always": False,
            "status": "active",
            "supersedes": [],
            "created": "2026-11-30T09:00:00Z",
            "updated": "2026-11-30T09:00:00Z",
            "source": "save",
        }
        data = render_checked(meta, memory["body"], scope="project", tier="durable")
        (folder / f"{memory['id']}.md").write_bytes(data)
    return workspace, home
