"""The in-process view of memory files, refreshed incrementally, and the derived `index.json`.

A refresh stats every `*.md` file of both tiers and re-parses only those whose mtime or size
changed, so a hand edit is picked up by the next read without a restart. `index.json`
records what engram knows (file, hash, card fields) plus a `sealed` hash per memory: the
hash engram itself last wrote or a human accepted with `engram verify --accept`. Comparing
the two is how `verify` reports hand edits. The index is rewritten when the view changes;
a corrupt or missing index is simply rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from store.errors import Busy, CorruptMemory
from store.fsutil import workspace_lock, write_atomic
from store.ids import is_valid_id
from store.memory import Memory, parse_memory
from store.workspace import ScopeDir

INDEX_VERSION: Final = 1
TIERS: Final = (("durable", "memory_dir"), ("working", "working_dir"))


@dataclass(frozen=True, slots=True)
class Problem:
    """A file engram could not use; `file` is scope-relative, never an absolute path."""

    code: str
    file: str
    message: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Every parsed memory of one scope at one instant, plus the files that failed."""

    memories: tuple[Memory, ...]
    problems: tuple[Problem, ...]
    files: dict[str, str]
    """memory key (`tier/id`) → scope-relative file name."""


@dataclass(slots=True)
class _Entry:
    mtime_ns: int
    size: int
    memory: Memory | None
    problem: Problem | None


def memory_key(memory: Memory) -> str:
    return f"{memory.tier}/{memory.id}"


class Catalog:
    """One scope's files, cached by (mtime, size)."""

    def __init__(self, scope: ScopeDir, *, persist: bool) -> None:
        self.scope = scope
        self._persist = persist
        self._entries: dict[Path, _Entry] = {}
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._scan_problems: list[Problem] = []
        self._indexed_digest = ""

    def refresh(self) -> Snapshot:
        with self._lock:
            changed = False
            seen: set[Path] = set()
            problems: list[Problem] = []
            for tier, attr in TIERS:
                folder: Path = getattr(self.scope, attr)
                for path, problem in self._scan(folder):
                    if problem is not None:
                        problems.append(problem)
                        continue
                    seen.add(path)
                    changed |= self._update(path, tier)
            for gone in set(self._entries) - seen:
                del self._entries[gone]
                changed = True
            if changed or self._snapshot is None or problems != self._scan_problems:
                self._scan_problems = problems
                self._snapshot = self._build(problems)
            snapshot = self._snapshot
        if self._persist:
            self._write_index(snapshot)
        return snapshot

    def _scan(self, folder: Path) -> list[tuple[Path, Problem | None]]:
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            return []
        except (NotADirectoryError, PermissionError) as exc:
            reason = (
                "is not a folder"
                if isinstance(exc, NotADirectoryError)
                else "cannot be read (permission denied)"
            )
            return [
                (
                    folder,
                    Problem(
                        "ENGRAM_CORRUPT", self.scope.display(folder), f"{reason}; nothing in it is loaded"
                    ),
                )
            ]
        found: list[tuple[Path, Problem | None]] = []
        for entry in sorted(entries, key=lambda e: e.name):
            name = entry.name
            if not name.endswith(".md") or name.startswith("."):
                continue
            path = Path(entry.path)
            shown = self.scope.display(path)
            if entry.is_symlink():
                found.append(
                    (path, Problem("ENGRAM_REFUSED", shown, "symbolic links are not followed; skipped"))
                )
            elif not is_valid_id(name[:-3]):
                found.append(
                    (path, Problem("ENGRAM_VALIDATION", shown, "file name is not a memory id; skipped"))
                )
            elif entry.is_file(follow_symlinks=False):
                found.append((path, None))
        return found

    def _update(self, path: Path, tier: str) -> bool:
        try:
            stat = path.stat(follow_symlinks=False)
        except FileNotFoundError:
            self._entries.pop(path, None)
            return True
        cached = self._entries.get(path)
        if cached is not None and cached.mtime_ns == stat.st_mtime_ns and cached.size == stat.st_size:
            return False
        memory: Memory | None = None
        problem: Problem | None = None
        shown = self.scope.display(path)
        if stat.st_size > 1024 * 1024:
            problem = Problem(
                "ENGRAM_CORRUPT", shown, "larger than 1 MiB; skipped (split it into smaller memories)"
            )
        else:
            try:
                memory = parse_memory(path.read_bytes(), file_id=path.stem, scope=self.scope.scope, tier=tier)
            except CorruptMemory as exc:
                problem = Problem(exc.code, shown, exc.message)
            except OSError as exc:
                problem = Problem("ENGRAM_CORRUPT", shown, f"cannot be read ({exc.strerror})")
        self._entries[path] = _Entry(stat.st_mtime_ns, stat.st_size, memory, problem)
        return True

    def _build(self, scan_problems: list[Problem]) -> Snapshot:
        memories: list[Memory] = []
        files: dict[str, str] = {}
        problems = list(scan_problems)
        for path in sorted(self._entries):
            entry = self._entries[path]
            if entry.memory is not None:
                memories.append(entry.memory)
                files[memory_key(entry.memory)] = self.scope.display(path)
            elif entry.problem is not None:
                problems.append(entry.problem)
        return Snapshot(tuple(memories), tuple(problems), files)

    # --- index.json --------------------------------------------------------------------------
    def read_index(self) -> tuple[dict[str, Any], Problem | None]:
        """The stored index records by key, or ({}, problem) when missing or corrupt."""
        path = self.scope.index_path
        try:
            data = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return {}, None
        except (OSError, orjson.JSONDecodeError):
            return {}, Problem(
                "ENGRAM_CORRUPT", self.scope.display(path), "unreadable; rebuilt from the files"
            )
        if (
            not isinstance(data, dict)
            or data.get("version") != INDEX_VERSION
            or not isinstance(data.get("memories"), dict)
        ):
            return {}, Problem(
                "ENGRAM_CORRUPT", self.scope.display(path), "unknown format; rebuilt from the files"
            )
        return data["memories"], None

    def _write_index(
        self, snapshot: Snapshot, seal: set[str] | None = None, unseal: set[str] | None = None
    ) -> None:
        digest = hashlib.sha256(
            orjson.dumps([[memory_key(m), m.hash] for m in snapshot.memories])
        ).hexdigest()
        if digest == self._indexed_digest and not seal and not unseal:
            return
        if not self.scope.root.is_dir():
            return
        try:
            with workspace_lock(self.scope.lock_path, timeout=0.5):
                stored, _ = self.read_index()
                records: dict[str, Any] = {}
                for memory in snapshot.memories:
                    key = memory_key(memory)
                    found = stored.get(key)
                    previous: dict[str, Any] = found if isinstance(found, dict) else {}
                    record = _record(memory, snapshot.files[key])
                    if seal is not None and key in seal:
                        record["sealed"] = memory.hash
                    elif previous.get("sealed"):
                        record["sealed"] = previous["sealed"]
                    records[key] = record
                if unseal is None:
                    for key, previous in stored.items():  # keep tombstones until accepted
                        if key not in records and isinstance(previous, dict) and previous.get("sealed"):
                            records[key] = {**previous, "gone": True}
                body = {"version": INDEX_VERSION, "memories": records}
                write_atomic(self.scope.index_path, orjson.dumps(body, option=orjson.OPT_SORT_KEYS))
                self._indexed_digest = digest
        except (Busy, OSError):
            return  # derived data: the next refresh writes it

    def seal(self, snapshot: Snapshot, keys: set[str] | None = None) -> None:
        """Record current hashes as reviewed: `keys` (engram's own writes), or all (`verify --accept`)."""
        self._indexed_digest = ""
        if keys is None:
            self._write_index(snapshot, seal={memory_key(m) for m in snapshot.memories}, unseal=set())
        else:
            self._write_index(snapshot, seal=keys)


def _record(memory: Memory, file: str) -> dict[str, Any]:
    return {
        "id": memory.id,
        "tier": memory.tier,
        "file": file,
        "hash": memory.hash,
        "type": memory.type,
        "title": memory.title,
        "status": memory.status,
        "always": memory.always,
    }
