"""The in-process view of one scope's memory files, refreshed incrementally.

The rest, and why: docs/design.md, `store/read/catalog.py`.
"""

from __future__ import annotations

import os
import stat as stat_mode
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from store.errors import Busy, CorruptMemory, NotRegular, Problem, ReadOnly, UnsafePath
from store.files.fsutil import read_regular
from store.files.ids import is_valid_id
from store.files.lock import default_timeout, workspace_lock
from store.files.memory import MAX_FILE_BYTES, Memory, parse_memory
from store.files.workspace import ScopeDir, check_scope, unsafe
from store.progress import Progress
from store.read import change_feed
from store.read.change_feed import Subscription
from store.read.columns import Columns
from store.read.folder_scan import NOT_REGULAR, look, scan
from store.read.index_file import SHELL_MARK, IndexFile, Records, index_records
from store.read.snapshot import Broken, Snapshot, memory_key

TIERS: Final = (("durable", "memory_dir"), ("working", "working_dir"))
SMALL_STORE: Final = 200
SWEEP_SECONDS: Final = 2.0
"""The shortest pause between two background sweeps of a large store."""
SWEEP_SHARE: Final = 0.005
"""The most of one core background sweeps may take: a sweep that took d seconds is followed by
a pause of at least d / SWEEP_SHARE."""
WATCH_AFTER: Final = 0.5
"""Seconds the sweeper lets pass before it asks for change notification: importing watchdog and
starting its threads (~30 ms) would otherwise compete with a server's first search."""
WATCHED_SWEEP_SECONDS: Final = 300.0
"""The pause between sweeps while change notification watches every memory folder (a sweep
then only catches what a notification could miss, such as an overflowed event queue)."""


def sweep_pause(took: float, *, watched: bool) -> float:
    """Seconds to wait before the next background sweep, after one that took `took` seconds."""
    return max(WATCHED_SWEEP_SECONDS if watched else SWEEP_SECONDS, took / SWEEP_SHARE)


@dataclass(slots=True)
class _Entry:
    mtime_ns: int
    size: int
    inode: int
    memory: Memory | None
    problem: Problem | None
    tier: str = "durable"
    parsed: bool = True
    """With `problem`: the bytes were read and failed to parse (False: never read)."""


TRUST_AFTER_NS: Final = 2_000_000_000
"""How long after a folder's mtime the catalog must have known every file in it for a later
process to trust that mtime: a change made in the same tick of a coarse clock leaves the mtime
as it was, so a stamp read within that time of the change vouches for nothing."""


def trusted_stamp(stored: object, folder: Path) -> int | None:
    """The folder's mtime when index.json's stamp for it still holds: the folder has that mtime
    now, and every change up to then was taken in at least TRUST_AFTER_NS after it."""
    if not (isinstance(stored, list) and len(stored) == 2 and all(type(v) is int for v in stored)):
        return None
    stamp, known = int(stored[0]), int(stored[1])
    found = _stamp_now(folder)
    if stamp == -1 and found is None and not os.path.lexists(folder):
        return -1  # absent then and now (a folder made since has a stamp of its own)
    if found is None or found[0] != stamp or known - stamp < TRUST_AFTER_NS:
        return None
    return stamp


def _stamp_now(folder: Path) -> tuple[int, int] | None:
    """(the folder's mtime, a time read before it), None when it cannot be read."""
    began = time.time_ns()
    try:
        return folder.stat().st_mtime_ns, began
    except OSError:
        return None


def _edited(known: list[tuple[str, int, int]]) -> list[str]:
    """The paths whose (mtime, size) differ from what is known of them."""
    edited = []
    for path, mtime_ns, size in known:
        try:
            stat = os.stat(path, follow_symlinks=False)
        except OSError:
            continue  # gone: the folder listing notices
        if (stat.st_mtime_ns, stat.st_size) != (mtime_ns, size):
            edited.append(path)
    return edited


def _stem(path: str) -> str:
    """A memory file's name without `.md` (its id, when the name is one)."""
    name = os.path.basename(path)
    return name[:-3] if name.endswith(".md") else ""


class Catalog:
    """One scope's files, cached by (mtime, size)."""

    def __init__(
        self,
        scope: ScopeDir,
        *,
        persist: bool,
        key: Callable[[], bytes] = lambda: b"",
        notice: Callable[[str, str], None] = lambda code, message: None,
        watch: bool = True,
        background: bool = True,
        clock: Callable[[], float] = time.monotonic,
        readable: bool = True,
    ) -> None:
        """`watch`: ask for change notification; `background`: run the background sweeper (and
        so the watch) at all, which a one-shot command that reads once does without; `readable`
        False: the scope's root cannot be used (an `$ENGRAM_HOME` linked to itself, said once by
        the store), so the catalog holds nothing and reports nothing of its folders."""
        self.scope = scope
        self._readable = readable
        self._persist = persist
        self._file = IndexFile(scope, key=key, notice=notice)
        self._tiers = [(tier, getattr(scope, attr)) for tier, attr in TIERS]
        """(tier, folder): the same Path objects throughout, so `is` can compare them."""
        self._entries: dict[str, _Entry] = {}
        """By path; an entry's folder is its tier's (no second table of 100,000 paths)."""
        self._memories: dict[str, Memory] = {}
        """The parsed entries' memories by path, kept as entries change: a snapshot is its copy."""
        self._failed: dict[str, None] = {}
        """Paths of the entries with a problem, in the order they failed."""
        self._counts = {tier: 0 for tier, _ in TIERS}
        """Entries per tier: a listing that saw as many of them as there are lost none."""
        self._folders: dict[Path, int] = {}
        self._folder_problems: dict[Path, list[tuple[str, Problem]]] = {}
        """By folder: (path, problem) of what a listing refused (a link, a name that is no id)."""
        self._last_sweep = 0.0
        self._sweeper: threading.Thread | None = None
        self._swept: set[str] = set()
        self._swept_lock = threading.Lock()
        self._closed = threading.Event()
        self._watch = watch
        self._background = background
        self._watcher: Any = None
        self._watched: set[Path] = set()
        self._clock = clock
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._version = 0
        self._changes: dict[str, Memory | None] = {}
        self._seeded = False
        self._stored = Records()
        self._dirty = False
        self._last_write = 0.0
        self._feed: Subscription | None = None
        """Linux: the kernel's change notification, read at each refresh (store.read.change_feed)."""
        self._fed: set[Path] = set()
        """Folders the feed follows: a refresh takes their changed names instead of listing them."""
        self._known: dict[Path, tuple[int, int]] = {}
        """Per folder, (its mtime, a time by which every change to it was taken in): what
        index.json records, for the next process to skip the listing (`trusted_stamp`)."""
        self._stamps_written: dict[str, Any] = {}

    # --- refresh -----------------------------------------------------------------------------
    def refresh(self, *, recent_ok: bool = False, force: bool = False) -> Snapshot:
        """Take in changed files. `recent_ok`: a sweep less than a second old is good enough
        (a proposal's preview; its commit re-checks with a fresh look). `force`: stat every
        known file now, whatever the store's size (writes, under the lock)."""
        with self._lock:
            if not self._seeded:
                self._seed()
            changed = False
            now = time.monotonic()
            since = now - self._last_sweep
            small = len(self._entries) <= SMALL_STORE
            sweep = force or (small and (since >= 1.0 or not recent_ok))
            if sweep:
                self._last_sweep = now
            with self._swept_lock:
                swept, self._swept = self._swept, set()
            for path in swept:  # changed in place: notified, or found by the background sweep
                entry = self._entries.get(path)
                if entry is not None:
                    changed |= self._update(path, entry.tier, entry.inode)
            notified = self._notified()
            for tier, folder in self._tiers:
                if folder in self._fed:
                    changed |= self._take_names(folder, tier, notified.get(folder, set()))
                    changed |= self._sweep(tier) if sweep else False
                else:
                    changed |= self._refresh_folder(folder, tier, sweep)
            if len(self._entries) > SMALL_STORE:
                self._start_sweeper()
            if changed or self._snapshot is None:
                self._version += 1
                self._snapshot = self._build()
            if self._stored:  # files the stored index knew that are gone now
                self._stored.clear()
                self._dirty = True
            snapshot = self._snapshot
        if self._persist and self._dirty and self._last_write == 0.0 and len(self._entries) <= SMALL_STORE:
            self.flush()  # a small store's first index is cheap: write it at once
        return snapshot

    def _start_sweeper(self) -> None:
        """Large stores: find edits made in place (same name, same folder mtime) off the request
        path, so the next read after one takes it in."""
        if self._sweeper is None and self._background and not self._closed.is_set():
            self._sweeper = threading.Thread(target=self.sweep_forever, name="engram-sweep", daemon=True)
            self._sweeper.start()

    def sweep_forever(self, wait: Callable[[float], bool] | None = None) -> None:
        """Watch the memory folders where the platform can (after `WATCH_AFTER`, then one sweep
        for what was edited before the watch began), and sweep between pauses (see
        `sweep_pause`) until `close`. `wait(seconds)` returns True to stop (tests inject it)."""
        wait = wait or self._closed.wait
        took = 0.0  # the first refresh has just stat'ed every file
        if self._watch:
            if wait(WATCH_AFTER):
                return
            if self._watch_folders():  # watched from now on: catch what was edited before
                began = self._clock()
                self.note_edited(self._stat_all())
                took = self._clock() - began
        while True:
            if wait(sweep_pause(took, watched=self._watch_folders())):
                return
            began = self._clock()
            self.note_edited(self._stat_all())
            took = self._clock() - began

    def _stat_all(self) -> list[str]:
        with self._lock:
            known = [(path, e.mtime_ns, e.size) for path, e in self._entries.items()]
        return _edited(known)

    def _stat_all_locked(self) -> list[str]:
        return _edited([(path, e.mtime_ns, e.size) for path, e in self._entries.items()])

    def _watch_folders(self) -> bool:
        """Ask for change notification on every memory folder that exists and is not watched
        yet; True when all of them are. False where the platform has none (watchdog would poll,
        which is what the sweep already does) or when the system refuses a watch."""
        if not self._watch or self._closed.is_set():
            return False
        if self._fed and all(folder in self._fed or not folder.is_dir() for _, folder in self._tiers):
            return True  # the kernel's feed, read at each refresh, sees what changes
        try:
            from store.read import folder_watch  # seam: watchdog and its observer threads
        except ImportError:
            return False
        if not folder_watch.NATIVE:
            return False
        folders = [folder for _, folder in self._tiers]
        try:
            if self._watcher is None:
                self._watcher = folder_watch.FolderWatch(self.note_edited)
            self._watcher.watch(folders, self._watched)
        except (OSError, RuntimeError):  # e.g. the inotify watch limit: sweeping still works
            return False
        return all(folder in self._watched or not folder.is_dir() for folder in folders)

    def note_edited(self, paths: list[str]) -> None:
        """These files may have changed in place: the next refresh re-stats them."""
        if paths:
            with self._swept_lock:
                self._swept.update(paths)

    def close(self) -> None:
        """Stop the background sweeper and change notification (the store is closing)."""
        self._closed.set()
        self._feed, self._fed = None, set()
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()

    def relist(self) -> None:
        """List every folder again at the next refresh: a file renamed in within the clock tick
        of the last listing leaves the folder's mtime as it was (verify and accept, under the lock)."""
        with self._lock:
            self._folders.clear()
            self._fed = set()

    def drain_changes(self) -> dict[str, Memory | None]:
        """Memories added or changed (None: removed) since the last call, by key."""
        with self._lock:
            changes, self._changes = self._changes, {}
        return changes

    def _notified(self) -> dict[Path, set[str]]:
        """The names the feed saw change, by folder; a folder it no longer follows (or every
        folder, when the kernel's queue overflowed) is listed whole at this refresh."""
        if self._feed is None or not self._fed:
            return {}
        stamps = {folder: _stamp_now(folder) for folder in self._fed}  # before the queue is read
        names, lost, overflow = self._feed.take()
        for folder, stamp in stamps.items():
            if stamp is not None and not overflow and folder not in lost:
                self._known[folder] = stamp
        for folder in self._fed if overflow else lost:
            self._folders.pop(folder, None)
        self._fed = set() if overflow else self._fed - lost
        return names

    def _follow(self, folder: Path) -> None:
        """Ask the feed to follow a folder about to be listed (a long-lived catalog only): what
        changes from now on is in the feed, what was there before is in the listing."""
        if not (self._background and self._watch) or self._closed.is_set() or unsafe(self.scope, folder):
            return
        if self._feed is None:
            self._feed = change_feed.subscribe()
            if self._feed is None:  # no inotify here: the folder's mtime tells, as before
                return
        if self._feed.follow(folder):
            self._fed.add(folder)

    def _take_names(self, folder: Path, tier: str, names: set[str]) -> bool:
        """Take in the files of a followed folder whose names the feed gave, each judged as a
        listing judges it (a link, a name that is no id, a FIFO are refused, never opened)."""
        if not names:
            return False
        changed = False
        before = self._folder_problems.get(folder, [])
        problems = [(path, problem) for path, problem in before if os.path.basename(path) not in names]
        for name in sorted(names):
            found = look(self.scope, folder, name)
            path = os.path.join(folder, name)
            if found is not None:
                _, inode, problem = found
                if problem is None:
                    changed |= self._update(path, tier, inode)
                    continue
                problems.append((path, problem))
            if path in self._entries:  # gone, or replaced by what is refused
                self._forget(path)
                changed = True
        if problems != before:
            self._folder_problems[folder] = problems
            changed = True
        return changed

    def _refresh_folder(self, folder: Path, tier: str, sweep: bool) -> bool:
        if not self._readable:
            return False
        began = time.time_ns()
        try:
            stamp = folder.stat().st_mtime_ns
        except FileNotFoundError:
            stamp = -1
        except OSError:
            stamp = -2
        if self._folders.get(folder) == stamp:
            return self._sweep(tier) if sweep else False
        self._folders[folder] = stamp
        if stamp >= 0:
            self._follow(folder)
        if stamp >= -1:
            self._known[folder] = (stamp, began)
        else:
            self._known.pop(folder, None)
        changed = False
        seen: list[str] = []
        problems: list[tuple[str, Problem]] = []
        known = self._counts[tier]
        found, unchanged = scan(self.scope, folder, self._entries, skip=not sweep)
        listed = len(unchanged)  # known files listed again
        progress = Progress(f"reading {self.scope.display(folder)}", len(found))
        for done, (path, inode, problem) in enumerate(found, 1):
            progress.step(done)
            if problem is not None:
                problems.append((path, problem))
                continue
            seen.append(path)
            cached = self._entries.get(path)
            listed += cached is not None
            if sweep or cached is None or cached.inode != inode:
                changed |= self._update(path, tier, inode)
        progress.finish()
        if listed != known:  # some known file was not listed: find which (else none is gone)
            present = {*unchanged, *seen}
            for gone in [p for p, e in self._entries.items() if e.tier == tier and p not in present]:
                self._forget(gone)
                changed = True
        if problems != self._folder_problems.get(folder, []):
            self._folder_problems[folder] = problems
            changed = True
        return changed

    def _sweep(self, tier: str) -> bool:
        """Same names as last time: stat each known file to catch edits made in place."""
        changed = False
        for path in [p for p, e in self._entries.items() if e.tier == tier]:
            entry = self._entries[path]
            try:
                stat = os.stat(path, follow_symlinks=False)
            except FileNotFoundError:
                self._forget(path)
                changed = True
                continue
            if (stat.st_mtime_ns, stat.st_size) != (entry.mtime_ns, entry.size):
                changed |= self._update(path, tier, stat.st_ino)
        return changed

    def _update(self, path: str, tier: str, inode: int) -> bool:
        """Take in one file (run for every file when a process starts: kept lean)."""
        try:
            stat = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            if path in self._entries:
                self._forget(path)
                return True
            return False
        mtime_ns, size = stat.st_mtime_ns, stat.st_size
        cached = self._entries.get(path)
        if cached is not None and cached.mtime_ns == mtime_ns and cached.size == size:
            cached.inode = inode
            return False
        name = path[path.rfind(os.sep) + 1 : -3]  # the folder's listing joined it with os.sep
        key = f"{tier}/{name}"
        memory: Memory | None = None
        problem: Problem | None = None
        parsed = False
        row = self._stored.row(key)
        rows = self._stored.rows
        fits = (
            row is not None and rows is not None and (rows.mtime_ns[row], rows.size[row]) == (mtime_ns, size)
        )
        if fits and cached is None and rows is not None and row is not None:
            self._stored.discard(key)
            memory = Memory.deferred(name, self.scope.scope, tier, path, rows, row, rows.eager_of(row))
            self._put(path, _Entry(mtime_ns, size, inode, memory, None, tier))
            if cached is None:
                self._counts[tier] += 1
            self._changes[key] = memory
            return True
        stored = self._stored.pop(key, None)
        if stored is not None and "r" not in stored:
            stored = None  # a seal without a record (a file engram knew, gone or not yet indexed)
        if stored is not None and stored.get("mtime_ns") == mtime_ns and stored.get("size") == size:
            try:
                memory = Memory.from_record(name, self.scope.scope, tier, path, stored["r"])
            except (KeyError, TypeError, ValueError, IndexError):
                memory, stored = None, None  # a record of another layout: parsed, and rewritten
        if memory is None:
            if not stat_mode.S_ISREG(stat.st_mode):  # a FIFO renamed over a memory would block a read
                problem = Problem("ENGRAM_CORRUPT", self._shown(path), NOT_REGULAR)
            elif stat.st_size > MAX_FILE_BYTES:
                problem = Problem(
                    "ENGRAM_CORRUPT",
                    self._shown(path),
                    "larger than 1 MiB; skipped (split it into smaller memories)",
                )
            else:
                try:
                    data = read_regular(path, MAX_FILE_BYTES)
                    memory = parse_memory(data, file_id=name, scope=self.scope.scope, tier=tier, path=path)
                except CorruptMemory as exc:
                    problem, parsed = Problem(exc.code, self._shown(path), exc.message), True
                except NotRegular:
                    problem = Problem("ENGRAM_CORRUPT", self._shown(path), NOT_REGULAR)
                except OSError as exc:
                    problem = Problem("ENGRAM_CORRUPT", self._shown(path), f"cannot be read ({exc.strerror})")
                except Exception as exc:  # one hostile file must never hide the rest of the store
                    problem = Problem(
                        "ENGRAM_CORRUPT", self._shown(path), f"cannot be parsed ({type(exc).__name__})"
                    )
                    parsed = True
        previous = cached.memory if cached is not None else None
        if memory is not None and previous is not None and memory.hash == previous.hash:
            self._put(path, _Entry(mtime_ns, size, inode, previous, problem, tier))
            return False  # touched, not changed
        if cached is None:
            self._counts[tier] += 1
        self._put(path, _Entry(mtime_ns, size, inode, memory, problem, tier, parsed))
        if stored is None or memory is None or memory.hash != stored["r"][0]:
            self._dirty = True  # index.json no longer describes this file
        self._changes[key] = memory
        return True

    def _shown(self, path: str) -> str:
        return self.scope.display(Path(path))

    def _put(self, path: str, entry: _Entry) -> None:
        self._entries[path] = entry
        if entry.memory is not None:
            self._memories[path] = entry.memory
        else:
            self._memories.pop(path, None)
        if entry.problem is not None:
            self._failed[path] = None
        else:
            self._failed.pop(path, None)

    def _forget(self, path: str) -> None:
        entry = self._entries.pop(path)
        self._memories.pop(path, None)
        self._failed.pop(path, None)
        self._counts[entry.tier] -= 1
        self._dirty = True
        if entry.memory is not None:
            self._changes[memory_key(entry.memory)] = None

    def _build(self) -> Snapshot:
        refused = [found for listed in self._folder_problems.values() for found in listed]
        failed = [(path, self._entries[path]) for path in self._failed]
        problems = [p for _, p in refused] + [e.problem for _, e in failed if e.problem is not None]
        scope = self.scope.scope
        broken = [
            Broken(scope, tier, name, problem, parsed=False)
            for path, problem in refused
            if (tier := self._tier_of(path)) and is_valid_id(name := _stem(path))
        ]
        broken += [Broken(scope, e.tier, _stem(path), e.problem, e.parsed) for path, e in failed if e.problem]
        return Snapshot(self._memories.copy(), tuple(problems), self._version, tuple(broken))

    def _tier_of(self, path: str) -> str:
        """The tier whose folder holds `path` ("" for a folder's own problem)."""
        parent = os.path.dirname(path)
        return next((tier for tier, folder in self._tiers if str(folder) == parent), "")

    def note_written(self, paths: list[Path]) -> None:
        """engram itself just wrote these files, holding the workspace lock: take them in now,
        without listing the folder (no other engram writer can have changed it meanwhile)."""
        with self._lock:
            changed = False
            touched: set[int] = set()
            for path in paths:
                for number, (tier, folder) in enumerate(self._tiers):
                    if path.parent != folder:
                        continue
                    touched.add(number)
                    try:
                        inode = path.stat().st_ino
                    except FileNotFoundError:
                        if str(path) in self._entries:
                            self._forget(str(path))
                            changed = True
                        continue
                    changed |= self._update(str(path), tier, inode)
            for number in touched:
                folder = self._tiers[number][1]
                if folder not in self._fed:
                    self._known.pop(folder, None)  # others may have changed it too: listed next time
                if folder in self._folders:
                    try:
                        self._folders[folder] = folder.stat().st_mtime_ns
                    except OSError:
                        self._folders.pop(folder, None)
            if changed:
                self._version += 1
                self._snapshot = self._build()

    # --- index.json ----------------------------------------------------------------------------
    def _seed(self) -> None:
        """Remember the stored records so unchanged files need no parsing in a new process;
        take every row in at once when index.json's stamps say no folder changed since."""
        self._seeded = True
        self._stored, _ = self.read_index()  # each record decoded when its file is refreshed
        stamps = self._file.stamps
        rows = self._stored.rows
        if not stamps or rows is None or not self._readable:
            return
        self._stamps_written = stamps
        trusted = {}
        for tier, folder in self._tiers:
            began = time.time_ns()
            self._follow(folder)  # before the stamp is read: a change from now on is in the feed
            found = trusted_stamp(stamps.get(tier), folder)
            if found is None:  # a folder moved (or its stamp was too fresh to trust): listed as before
                self._fed = set()
                return
            trusted[folder] = (found, began)
        self._take_rows(rows, stat=not self._background)
        for folder, (stamp, began) in trusted.items():
            self._folders[folder] = stamp
            self._known[folder] = (stamp, began)

    def _take_rows(self, rows: Columns, *, stat: bool) -> None:
        """Every row of index.json as the catalog's entry, its memory deferred (a folder that
        did not move holds the same files). With `stat` (a one-shot command, which has no
        sweeper to find an edit made in place later) each file is stat'ed and a changed one read."""
        scope = self.scope.scope
        folders = {tier: str(folder) + os.sep for tier, folder in self._tiers}
        entries, memories, changes = self._entries, self._memories, self._changes
        deferred, intern = Memory.deferred, sys.intern
        tiers = {tier: intern(tier) for tier in folders}
        columns = zip(rows.key, rows.mtime_ns, rows.size, rows.inode, *rows.eager, strict=True)
        for row, (key, mtime_ns, size, inode, *eager) in enumerate(columns):
            tier, _, name = key.partition("/")
            base = folders.get(tier)
            if base is None or not name:
                continue
            tier = tiers[tier]
            eager[1], eager[2] = intern(eager[1]), intern(eager[2])  # type, status: a few values each
            path = base + name + ".md"
            memory = deferred(name, scope, tier, path, rows, row, eager)
            entries[path] = _Entry(mtime_ns, size, inode, memory, None, tier)
            memories[path] = memory
            changes[key] = memory
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
            trusted_stamp(self._stamps_written.get(tier), folder) is not None for tier, folder in self._tiers
        ):
            return False
        with self._lock:
            stamps = self._stamps()
        return bool(stamps) and all(
            known - stamp >= TRUST_AFTER_NS or stamp < 0 for stamp, known in stamps.values()
        )

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
