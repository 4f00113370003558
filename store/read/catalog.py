"""The in-process view of one scope's memory files, refreshed incrementally.

The rest, and why: docs/design.md, `store/read/catalog.py`.
"""

from __future__ import annotations

import os
import stat as stat_mode
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from store.errors import CorruptMemory, NotRegular, Problem
from store.files.fsutil import read_regular
from store.files.ids import is_valid_id
from store.files.memory import MAX_FILE_BYTES, Memory, parse_memory
from store.files.workspace import ScopeDir, unsafe
from store.progress import Progress
from store.read.catalog_index import IndexSide
from store.read.freshness import change_feed, stamps
from store.read.freshness.change_feed import Subscription
from store.read.freshness.entry import Entry
from store.read.freshness.folder_scan import NOT_REGULAR, look, scan
from store.read.freshness.stamps import Stamp
from store.read.freshness.sweeper import Sweeping
from store.read.index_file import IndexFile, Records
from store.read.snapshot import Broken, Snapshot, memory_key

TIERS: Final = (("durable", "memory_dir"), ("working", "working_dir"))
SMALL_STORE: Final = 200


def _stem(path: str) -> str:
    """A memory file's name without `.md` (its id, when the name is one)."""
    name = os.path.basename(path)
    return name[:-3] if name.endswith(".md") else ""


class Catalog(IndexSide, Sweeping):
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
        self._entries: dict[str, Entry] = {}
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
        """Linux: the kernel's change notification, read at each refresh (store.read.freshness.change_feed)."""
        self._fed: set[Path] = set()
        """Folders the feed follows: a refresh takes their changed names instead of listing them."""
        self._known: dict[Path, Stamp] = {}
        """Per folder, its stamp when every file in it was taken in: what index.json records,
        for the next process to skip the listing (store.read.freshness.stamps)."""
        self._followed: dict[Path, tuple[int, int]] = {}
        """Which folder (inode, device) the feed follows at each path: a folder swapped in
        under the path, a parent renamed or a link retargeted is listed again."""
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
        found = {folder: stamps.now(folder) for folder in self._fed}  # before the queue is read
        names, lost, overflow = self._feed.take()
        for folder, stamp in found.items():
            if stamp is None or stamp.folder != self._followed.get(folder):
                lost.add(folder)  # not the folder the feed follows: listed whole
            elif not overflow and folder not in lost:
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
        before = stamps.now(folder)
        if self._feed.follow(folder):
            after = stamps.now(folder)
            if before is not None and after is not None and before.folder == after.folder:
                self._followed[folder] = after.folder
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
        now = stamps.now(folder)
        stamp = -2 if now is None else now.mtime_ns
        if self._folders.get(folder) == stamp:
            return self._sweep(tier) if sweep else False
        self._folders[folder] = stamp
        if stamp >= 0:
            self._follow(folder)
        if now is not None:
            self._known[folder] = now
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
        # the same name, times and size but another inode is another file (a link retargeted, a
        # file renamed over within one tick): what was read of the old one never stands for it
        mtime_ns, size, inode = stat.st_mtime_ns, stat.st_size, stat.st_ino
        cached = self._entries.get(path)
        if cached is not None and (cached.mtime_ns, cached.size, cached.inode) == (mtime_ns, size, inode):
            return False
        name = path[path.rfind(os.sep) + 1 : -3]  # the folder's listing joined it with os.sep
        key = f"{tier}/{name}"
        memory: Memory | None = None
        problem: Problem | None = None
        parsed = False
        row = self._stored.row(key)
        rows = self._stored.rows
        fits = (
            row is not None
            and rows is not None
            and (rows.mtime_ns[row], rows.size[row], rows.inode[row]) == (mtime_ns, size, inode)
        )
        if fits and cached is None and rows is not None and row is not None:
            self._stored.discard(key)
            memory = Memory.deferred(name, self.scope.scope, tier, path, rows, row, rows.eager_of(row))
            self._put(path, Entry(mtime_ns, size, inode, memory, None, tier))
            if cached is None:
                self._counts[tier] += 1
            self._changes[key] = memory
            return True
        stored = self._stored.pop(key, None)
        if stored is not None and "r" not in stored:
            stored = None  # a seal without a record (a file engram knew, gone or not yet indexed)
        if stored is not None and (stored.get("mtime_ns"), stored.get("size"), stored.get("inode")) == (
            mtime_ns,
            size,
            inode,
        ):
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
            self._put(path, Entry(mtime_ns, size, inode, previous, problem, tier))
            return False  # touched, not changed
        if cached is None:
            self._counts[tier] += 1
        self._put(path, Entry(mtime_ns, size, inode, memory, problem, tier, parsed))
        if stored is None or memory is None or memory.hash != stored["r"][0]:
            self._dirty = True  # index.json no longer describes this file
        self._changes[key] = memory
        return True

    def _shown(self, path: str) -> str:
        return self.scope.display(Path(path))

    def _put(self, path: str, entry: Entry) -> None:
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
