"""The in-process view of one scope's memory files, refreshed incrementally, and `index.json`.

A refresh re-parses only files whose mtime or size changed, so a hand edit is picked up by the
next read without a restart. Cost stays low on large stores:

* a folder whose mtime did not change is not listed again; engram's own writes and editors
  that save by renaming change it, so they are seen at once;
* every file is re-stat'ed on every read while a scope holds at most `SMALL_STORE` files, and
  at most every `SWEEP_SECONDS` above that (an in-place edit of a large store shows up within
  that time);
* `index.json` keeps, per file, its mtime and size, the fields reads need and the hash, so a
  new process parses only files that changed since the index was written.

`index.json` also holds a `sealed` hash per memory: the hash engram itself last wrote or a
human accepted with `engram verify --accept`; `verify` compares the two to report hand edits.
The index is derived data: missing or corrupt, it is rebuilt from the files.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from store.errors import Busy, CorruptMemory
from store.fsutil import workspace_lock, write_atomic
from store.ids import is_valid_id
from store.memory import MAX_FILE_BYTES, Memory, parse_memory
from store.workspace import ScopeDir

INDEX_VERSION: Final = 2
TIERS: Final = (("durable", "memory_dir"), ("working", "working_dir"))
SMALL_STORE: Final = 2000
SWEEP_SECONDS: Final = 2.0
INDEX_WRITE_SECONDS: Final = 5.0
"""Derived index writes after a refresh are spaced this far apart (and flushed on close)."""


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
    version: int


@dataclass(slots=True)
class _Entry:
    mtime_ns: int
    size: int
    inode: int
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
        self._folders: dict[Path, int] = {}
        self._folder_problems: dict[Path, list[Problem]] = {}
        self._last_sweep = 0.0
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._version = 0
        self._changes: dict[str, Memory | None] = {}
        self._seeded = False
        self._stored: dict[str, Any] = {}
        self._dirty = False
        self._last_write = 0.0

    # --- refresh -----------------------------------------------------------------------------
    def refresh(self) -> Snapshot:
        with self._lock:
            if not self._seeded:
                self._seed()
            changed = False
            now = time.monotonic()
            sweep = len(self._entries) <= SMALL_STORE or now - self._last_sweep >= SWEEP_SECONDS
            if sweep:
                self._last_sweep = now
            for tier, attr in TIERS:
                changed |= self._refresh_folder(getattr(self.scope, attr), tier, sweep)
            if changed or self._snapshot is None:
                self._version += 1
                self._snapshot = self._build()
                self._dirty = True
            snapshot = self._snapshot
        if self._persist and self._dirty and time.monotonic() - self._last_write >= INDEX_WRITE_SECONDS:
            self.flush()
        return snapshot

    def drain_changes(self) -> dict[str, Memory | None]:
        """Memories added or changed (None: removed) since the last call, by key."""
        with self._lock:
            changes, self._changes = self._changes, {}
        return changes

    def _refresh_folder(self, folder: Path, tier: str, sweep: bool) -> bool:
        try:
            stamp = folder.stat().st_mtime_ns
        except FileNotFoundError:
            stamp = -1
        except OSError:
            stamp = -2
        if not sweep and self._folders.get(folder) == stamp:
            return False
        self._folders[folder] = stamp
        changed = False
        seen: set[Path] = set()
        problems: list[Problem] = []
        for path, inode, problem in self._scan(folder):
            if problem is not None:
                problems.append(problem)
                continue
            seen.add(path)
            cached = self._entries.get(path)
            if sweep or cached is None or cached.inode != inode:
                changed |= self._update(path, tier, inode)
        for gone in [p for p in self._entries if p.parent == folder and p not in seen]:
            self._forget(gone)
            changed = True
        if problems != self._folder_problems.get(folder, []):
            self._folder_problems[folder] = problems
            changed = True
        return changed

    def _scan(self, folder: Path) -> list[tuple[Path, int, Problem | None]]:
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
                    0,
                    Problem(
                        "ENGRAM_CORRUPT", self.scope.display(folder), f"{reason}; nothing in it is loaded"
                    ),
                )
            ]
        found: list[tuple[Path, int, Problem | None]] = []
        for entry in sorted(entries, key=lambda e: e.name):
            name = entry.name
            if not name.endswith(".md") or name.startswith("."):
                continue
            path = Path(entry.path)
            shown = self.scope.display(path)
            if entry.is_symlink():
                problem = Problem("ENGRAM_REFUSED", shown, "symbolic links are not followed; skipped")
                found.append((path, 0, problem))
            elif not is_valid_id(name[:-3]):
                found.append(
                    (path, 0, Problem("ENGRAM_VALIDATION", shown, "file name is not a memory id; skipped"))
                )
            elif entry.is_file(follow_symlinks=False):
                found.append((path, entry.inode(), None))
        return found

    def _update(self, path: Path, tier: str, inode: int) -> bool:
        try:
            stat = path.stat(follow_symlinks=False)
        except FileNotFoundError:
            if path in self._entries:
                self._forget(path)
                return True
            return False
        cached = self._entries.get(path)
        if cached is not None and (cached.mtime_ns, cached.size) == (stat.st_mtime_ns, stat.st_size):
            cached.inode = inode
            return False
        key = f"{tier}/{path.stem}"
        memory: Memory | None = None
        problem: Problem | None = None
        shown = self.scope.display(path)
        stored = self._stored.pop(key, None)
        if (
            stored is not None
            and stored.get("mtime_ns") == stat.st_mtime_ns
            and stored.get("size") == stat.st_size
        ):
            try:
                memory = Memory.from_record(path.stem, self.scope.scope, tier, path, stored["r"])
            except (KeyError, TypeError, ValueError, IndexError):
                memory = None
        if memory is None:
            if stat.st_size > MAX_FILE_BYTES:
                problem = Problem(
                    "ENGRAM_CORRUPT", shown, "larger than 1 MiB; skipped (split it into smaller memories)"
                )
            else:
                try:
                    data = path.read_bytes()
                    memory = parse_memory(
                        data, file_id=path.stem, scope=self.scope.scope, tier=tier, path=path
                    )
                except CorruptMemory as exc:
                    problem = Problem(exc.code, shown, exc.message)
                except OSError as exc:
                    problem = Problem("ENGRAM_CORRUPT", shown, f"cannot be read ({exc.strerror})")
        previous = cached.memory if cached is not None else None
        self._entries[path] = _Entry(stat.st_mtime_ns, stat.st_size, inode, memory, problem)
        if memory is not None and previous is not None and memory.hash == previous.hash:
            self._entries[path].memory = previous  # touched, not changed
            return False
        self._changes[key] = memory
        return True

    def _forget(self, path: Path) -> None:
        entry = self._entries.pop(path)
        if entry.memory is not None:
            self._changes[memory_key(entry.memory)] = None

    def _build(self) -> Snapshot:
        memories = tuple(e.memory for _, e in sorted(self._entries.items()) if e.memory is not None)
        problems = [p for found in self._folder_problems.values() for p in found]
        problems += [e.problem for _, e in sorted(self._entries.items()) if e.problem is not None]
        return Snapshot(memories, tuple(problems), self._version)

    def note_written(self, paths: list[Path]) -> None:
        """engram itself just wrote these files: take them in now, without a listing."""
        with self._lock:
            changed = False
            for path in paths:
                for tier, attr in TIERS:
                    if path.parent == getattr(self.scope, attr):
                        try:
                            inode = path.stat().st_ino
                        except FileNotFoundError:
                            if path in self._entries:
                                self._forget(path)
                                changed = True
                            continue
                        changed |= self._update(path, tier, inode)
                        self._folders.pop(path.parent, None)
            if changed:
                self._version += 1
                self._snapshot = self._build()
                self._dirty = True

    # --- index.json ----------------------------------------------------------------------------
    def _seed(self) -> None:
        """Remember the stored records so unchanged files need no parsing in a new process."""
        self._seeded = True
        stored, _ = self.read_index()
        self._stored = {k: v for k, v in stored.items() if isinstance(v, dict) and "r" in v}

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
        memories = data.get("memories") if isinstance(data, dict) else None
        if not isinstance(memories, dict) or data.get("version") not in (1, INDEX_VERSION):
            return {}, Problem(
                "ENGRAM_CORRUPT", self.scope.display(path), "unknown format; rebuilt from the files"
            )
        return memories, None

    def flush(self, seal: set[str] | None = None, accept_all: bool = False) -> None:
        """Write index.json: every current record, keeping stored seals (and setting `seal`)."""
        if not self._persist or not self.scope.root.is_dir():
            return
        with self._lock:
            entries = [(p, e) for p, e in sorted(self._entries.items()) if e.memory is not None]
            self._dirty = False
            self._last_write = time.monotonic()
        try:
            with workspace_lock(self.scope.lock_path, timeout=0.5):
                stored, _ = self.read_index()
                records: dict[str, Any] = {}
                for path, entry in entries:
                    memory = entry.memory
                    assert memory is not None
                    key = memory_key(memory)
                    found = stored.get(key)
                    previous: dict[str, Any] = found if isinstance(found, dict) else {}
                    record: dict[str, Any] = {
                        "file": self.scope.display(path),
                        "mtime_ns": entry.mtime_ns,
                        "size": entry.size,
                        "r": memory.record(),
                    }
                    if accept_all or (seal is not None and key in seal):
                        record["sealed"] = memory.hash
                    elif previous.get("sealed"):
                        record["sealed"] = previous["sealed"]
                    records[key] = record
                if not accept_all:
                    for key, previous in stored.items():  # keep tombstones until accepted
                        if key not in records and isinstance(previous, dict) and previous.get("sealed"):
                            records[key] = {
                                "file": previous.get("file"),
                                "sealed": previous["sealed"],
                                "gone": True,
                            }
                body = {"version": INDEX_VERSION, "memories": records}
                write_atomic(self.scope.index_path, orjson.dumps(body))
        except (Busy, OSError):
            with self._lock:
                self._dirty = True  # derived data: a later flush writes it

    def seal(self, keys: set[str] | None = None) -> None:
        """Record current hashes as reviewed: `keys` (engram's own writes), or all (`verify --accept`)."""
        self.refresh()
        self.flush(seal=keys or set(), accept_all=keys is None)


def digest(memories: tuple[Memory, ...]) -> str:
    return hashlib.sha256("\n".join(f"{memory_key(m)}:{m.hash}" for m in memories).encode()).hexdigest()
