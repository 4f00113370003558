"""The catalog's side that reads and writes index.json (store.read.catalog.Catalog inherits
it): seeding a new process from the stored columns, flushing the records and folder stamps,
and sealing engram's own writes."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.errors import Busy, Problem, ReadOnly, UnsafePath
from store.files.lock import default_timeout, workspace_lock
from store.files.memory import Memory
from store.files.workspace import ScopeDir, check_scope
from store.read.columns import Columns
from store.read.freshness import stamps
from store.read.freshness.entry import Entry
from store.read.freshness.stamps import Stamp
from store.read.index_file import SHELL_MARK, IndexFile, Records, index_records
from store.read.snapshot import Snapshot, memory_key


class IndexSide:
    """index.json for one scope's catalog (the state is the catalog's own)."""

    scope: ScopeDir
    _file: IndexFile
    _tiers: list[tuple[str, Path]]
    _entries: dict[str, Entry]
    _memories: dict[str, Memory]
    _failed: dict[str, None]
    _counts: dict[str, int]
    _folders: dict[Path, int]
    _folder_problems: dict[Path, list[tuple[str, Problem]]]
    _lock: threading.Lock
    _snapshot: Snapshot | None
    _seeded: bool
    _stored: Records
    _dirty: bool
    _last_write: float
    _fed: set[Path]
    _known: dict[Path, Stamp]
    _stamps_written: dict[str, Any]
    _readable: bool
    _persist: bool
    _background: bool

    if TYPE_CHECKING:  # the catalog's and its sweeper's

        def _follow(self, folder: Path) -> None: ...

        def note_edited(self, paths: list[str]) -> None: ...

        def _stat_all_locked(self) -> list[str]: ...

        def refresh(self, *, recent_ok: bool = False, force: bool = False) -> Snapshot: ...

    # --- index.json ----------------------------------------------------------------------------
    def _seed(self) -> None:
        """Remember the stored records so unchanged files need no parsing in a new process;
        take every row in at once when index.json's stamps say no folder changed since."""
        self._seeded = True
        self._stored, _ = self.read_index()  # each record decoded when its file is refreshed
        written = self._file.stamps
        rows = self._stored.rows
        if not isinstance(written, dict) or not written or rows is None or not self._readable:
            return
        self._stamps_written = written
        trusted = {}
        for tier, folder in self._tiers:
            self._follow(folder)  # before the stamp is read: a change from now on is in the feed
            found = stamps.holding(written.get(tier), folder)
            if found is None:  # a folder changed (or its stamp was too fresh to trust): listed as before
                self._fed = set()
                return
            trusted[folder] = found
        try:
            self._take_rows(rows, stat=not self._background)
        except (TypeError, ValueError, AttributeError):  # sealed, so not expected: listed instead
            self._entries, self._memories, self._failed = {}, {}, {}
            self._counts = {tier: 0 for tier, _ in self._tiers}
            self._fed, self._stored = set(), Records()
            return
        for folder, found in trusted.items():
            self._folders[folder] = found.mtime_ns
            self._known[folder] = found

    def _take_rows(self, rows: Columns, *, stat: bool) -> None:
        """Every row of index.json as the catalog's entry, its memory deferred (a folder that
        did not move holds the same files). With `stat` (a one-shot command, which has no
        sweeper to find an edit made in place later) each file is stat'ed and a changed one read."""
        scope = self.scope.scope
        folders = {tier: str(folder) + os.sep for tier, folder in self._tiers}
        entries, memories = self._entries, self._memories
        deferred, intern, entry = Memory.deferred, sys.intern, tuple.__new__
        tiers = {tier: intern(tier) for tier in folders}
        hashes, types, statuses, untils, successors = rows.eager
        types, statuses = list(map(intern, types)), list(map(intern, statuses))  # a few values each
        columns = zip(
            rows.key,
            rows.mtime_ns,
            rows.size,
            rows.inode,
            hashes,
            types,
            statuses,
            untils,
            successors,
            strict=True,
        )
        # no change is recorded for the view: its first build reads the snapshot whole
        for row, (key, mtime_ns, size, inode, *eager) in enumerate(columns):
            tier, _, name = key.partition("/")
            base = folders.get(tier)
            if base is None or not name:
                continue
            tier = tiers[tier]
            path = base + name + ".md"
            memory = deferred(name, scope, tier, path, rows, row, eager)
            entries[path] = entry(Entry, (mtime_ns, size, inode, memory, None, tier, True))
            memories[path] = memory
        for tier, _ in self._tiers:
            self._counts[tier] = sum(1 for e in entries.values() if e.tier == tier)
        self._stored = Records()
        rows.keep_records_only()
        if stat:
            self.note_edited(self._stat_all_locked())

    def read_index(self) -> tuple[Records, Problem | None]:
        """The stored index records by key (seals.log folded in), and a problem when it was
        unusable or untrusted: then the next flush rebuilds it from the files."""
        if not self._readable:
            return Records(), None
        memories, problem = self._file.read()
        if problem is not None:
            self._dirty = True
        return memories, problem

    def flush(self, accept_all: bool = False, *, agent_shell: bool = False) -> None:
        """Write index.json when it no longer describes the files (every current record,
        keeping stored seals); `accept_all` writes it whatever, sealing every file that parses
        (one that does not keeps the seal it had: it is neither accepted nor recorded as gone); with
        `agent_shell` (`verify --accept` run from an agent's shell) a file whose seal is not its
        current hash, and a file gone since, is sealed as accepted there (`SHELL_MARK`): verify
        keeps listing it until the human accepts.

        Derived data: a busy lock skips it, except for `accept_all` (`verify --accept`), which
        is the human's record and raises Busy instead of being dropped."""
        if not self._persist or not (self._dirty or accept_all or self._stamps_due()):
            return
        if not self.scope.root.is_dir():
            return
        try:
            check_scope(self.scope)
        except UnsafePath:
            if accept_all:
                raise
            return  # derived data: never written through a link
        if not self._lock.acquire(timeout=default_timeout() if accept_all else 2.0):
            if accept_all:
                raise Busy("the store is still being indexed; nothing was recorded, retry shortly")
            return  # a refresh is still parsing (a huge store's first start): derived data, skip
        try:
            entries = [(p, e) for p, e in sorted(self._entries.items()) if e.memory is not None]
            broken = {b.key for b in self._snapshot.broken} if self._snapshot is not None else set()
            stamps = self._stamps()
            self._dirty = False
            self._last_write = time.monotonic()
        finally:
            self._lock.release()
        try:
            with workspace_lock(self.scope.lock_path, timeout=None if accept_all else 0.5):
                stored, _ = self.read_index()
                records = index_records(
                    [e for _, e in entries], stored, broken, accept_all=accept_all, agent_shell=agent_shell
                )
                self._file.write(records, stamps)
                self._stamps_written = stamps
        except (Busy, ReadOnly, OSError):  # ReadOnly: a sandbox's read-only mount
            with self._lock:
                self._dirty = True  # derived data: a later flush writes it
            if accept_all:
                raise

    def _stamps(self) -> dict[str, list[int]]:
        """What index.json records of the folders (under the lock): each tier's stamp when every
        folder's is known and no file is refused or failed (those are found by a listing)."""
        if self._failed or any(self._folder_problems.values()):
            return {}
        if any(folder not in self._known for _, folder in self._tiers):
            return {}
        return {tier: list(self._known[folder]) for tier, folder in self._tiers}

    def _stamps_due(self) -> bool:
        """Whether index.json's stamps no longer hold while this catalog's would: then a flush
        records them, and the next process skips the listing."""
        if self._stamps_written and all(
            stamps.holding(self._stamps_written.get(tier), folder) is not None for tier, folder in self._tiers
        ):
            return False
        with self._lock:
            mine = self._stamps()
        return bool(mine) and all(Stamp(*stamp).worth_keeping() for stamp in mine.values())

    def seal(self, keys: set[str] | None = None, *, agent_shell: bool = False) -> None:
        """Record current hashes as reviewed: `keys` (engram's own writes, appended to seals.log
        under the lock the writer holds; a key whose file engram removed is recorded as gone),
        or every file (`verify --accept`, a full rewrite). With `agent_shell` (a CLI write made
        from an agent's shell, SPEC §7) each seal carries `SHELL_MARK` (a removed file too), so
        verify lists it for the human's review instead of counting it as theirs."""
        if keys is None:
            self.refresh()
            self.flush(accept_all=True, agent_shell=agent_shell)
            return
        ids = {key.partition("/")[2] for key in keys}  # a set lookup per file, not a key built for each
        with self._lock:
            found = (e.memory for e in self._entries.values() if e.memory is not None and e.memory.id in ids)
            hashes = {key: memory.hash for memory in found if (key := memory_key(memory)) in keys}
            self._dirty = True
        if agent_shell:
            hashes = {key: SHELL_MARK + hashes.get(key, "") for key in keys}
        if not keys or not self._persist or not self.scope.root.is_dir():
            return
        self._file.append_seals(keys, hashes)
