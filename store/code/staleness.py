"""Staleness: each returned memory's `refs` checked against the working tree, on every read.

The rest, and why: docs/design.md, `store/code/staleness.py`.
"""

from __future__ import annotations

import os
import stat as stat_mode
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from store.code import renames
from store.code.globs import glob_match
from store.code.refs import MAX_SCAN_BYTES, Ref, defined_names, memory_refs
from store.code.validity import review_due
from store.files import fs_platform
from store.files.git import run_git
from store.files.memory import Memory
from store.safety import untrusted

REVIEW_MIN_LINES: Final = 20
REVIEW_SHARE: Final = 0.5
GLOB_SECONDS: Final = 2.0
_CACHE_LIMIT: Final = 50000
READ_BUDGET: Final = 60000
"""Path components looked at, files listed and names matched against a glob, for all refs of
one read together: a clone's hundred globs over a huge tree cost at most this much (about a
tenth of a second), and what the budget could not tell is never marked stale."""
_MAX_LINKS: Final = 40
_UNWALKED: Final = frozenset((".git", ".engram", "node_modules"))
_OUTSIDE: Final = object()
"""A path whose links lead out of the workspace."""
_UNKNOWN: Final = object()
"""A path the read's budget ran out before."""
STALE: Final = "stale"
MOVED: Final = "moved"
"""A ref whose file git saw renamed to one that still defines its symbol: the memory holds."""
FOLLOWABLE: Final = "the ref can follow it"
"""How a MOVED reason ends, so a surface can offer the ref update."""


class _Read:
    """One read's shared state: the files it looked at, and what is left of its budget."""

    __slots__ = ("files", "left")

    def __init__(self) -> None:
        self.files: dict[str, object] = {}
        self.left = READ_BUDGET

    def spend(self, cost: int = 1) -> bool:
        self.left -= cost
        return self.left >= 0


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root + os.sep)


@dataclass(frozen=True, slots=True)
class Mark:
    """`kind` is `stale` (a body is shown only when asked) or `review` (shown, flagged)."""

    kind: str
    reason: str

    def data(self) -> dict[str, str]:
        return {"kind": self.kind, "reason": self.reason}


def marks_data(marks: Sequence[Mark]) -> list[dict[str, str]]:
    return [m.data() for m in marks]


def is_stale(marks: Sequence[Mark]) -> bool:
    return any(m.kind == "stale" for m in marks)


def describe(marks: Sequence[Mark]) -> str:
    """`stale: a; b` / `review: c`, for one line of text."""
    parts = []
    for kind in ("stale", "review"):
        reasons = [m.reason for m in marks if m.kind == kind]
        if reasons:
            parts.append(f"{kind}: {'; '.join(reasons)}")
    return " · ".join(parts)


@dataclass(slots=True)
class _File:
    real: str
    """The file's real path, inside the workspace."""
    mtime_ns: int
    size: int
    names: frozenset[str] | None = None
    lines: int = -1


class Checker:
    """The checks of one workspace, with their caches (thread-safe; one per workspace)."""

    def __init__(self, workspace: Path, *, git: bool = True) -> None:
        self.root = workspace
        self._root_real = os.path.realpath(workspace)
        self._prefix = os.path.join(str(workspace), "")
        self._files: dict[str, _File] = {}
        self._refs: dict[tuple[str, str], tuple[tuple[Ref, ...], float | None, str]] = {}
        """(refs, updated, review_after) by (file, content hash), from the memory's record."""
        self._globs: dict[str, tuple[float, tuple[object, ...], tuple[str, ...], bool]] = {}
        """Glob listings by real folder: (when, stamps, names, walked to the end)."""
        self._lock = threading.Lock()
        self._git_wanted = git
        self._git_dir: str | None | bool = None if git else False
        self._git_key: tuple[object, ...] = ()
        self._churn: dict[str, list[tuple[int, int]]] = {}
        self._followed: set[str] = set()
        """Paths whose churn was read through git's renames."""
        self._renames: tuple[tuple[object, ...], renames.Renames] | None = None
        """Git's renames, with the stamps of HEAD, its reflog and the index they were read at."""

    # --- the checks ----------------------------------------------------------------------
    def marks(self, memory: Memory, today: str = "", read: _Read | None = None) -> tuple[Mark, ...]:
        """Every mark of one memory now (empty for a user-scope memory without review_after).
        `read`: the read this check belongs to (its files looked at once, its budget)."""
        read = _Read() if read is None else read
        found: list[Mark] = []
        if memory.scope == "project":
            refs, updated, _ = self._parsed(memory)
            if refs:
                found.extend(self._broken(refs, read))
                if not found and updated is not None:
                    found.extend(self._review(refs, updated, read))
        if today and memory.tier == "durable":
            due = review_due(self._parsed(memory)[2], today)
            if due:
                found.append(Mark("review", due))
        return tuple(found)

    def many(self, memories: Iterable[Memory], today: str = "") -> dict[str, tuple[Mark, ...]]:
        """Marks by display key (`id`, `user:id`, `note:id`) of the memories that have any."""
        memories = list(memories)
        mark = self.marker(memories, today)
        out = {}
        for memory in memories:
            marks = mark(memory)
            if marks:
                out[key(memory)] = marks
        return out

    def marker(self, likely: Iterable[Memory], today: str) -> Callable[[Memory], tuple[Mark, ...]]:
        """`marks` for one read: git is asked once for the `likely` memories' files, each cited
        file is looked at once however many memories cite it, and all of them share one budget."""
        self._prefetch_churn(list(likely))
        read = _Read()
        return lambda memory: self.marks(memory, today, read)

    def unresolved(self, written: Sequence[str]) -> list[str]:
        """The written refs that do not resolve now (a proposal's, before it is written),
        told with one read's budget for all of them."""
        read = _Read()
        return [ref.text for ref in memory_refs(written) if self.problem(ref, read)]

    def _parsed(self, memory: Memory) -> tuple[tuple[Ref, ...], float | None, str]:
        cache_key = (memory.path or memory.id, memory.hash)
        found = self._refs.get(cache_key)
        if found is None:
            refs = memory_refs(memory.refs) if memory.scope == "project" else ()
            found = (refs, _epoch(memory.updated), memory.review_after)
            with self._lock:
                if len(self._refs) > _CACHE_LIMIT:
                    self._refs.clear()
                self._refs[cache_key] = found
        return found

    def _broken(self, refs: Sequence[Ref], read: _Read) -> list[Mark]:
        out = []
        for ref in refs:
            kind, reason = self._verdict(ref, read)
            if reason:  # a file git saw renamed, its symbol still there, keeps the body: review
                out.append(Mark("review" if kind == MOVED else "stale", reason))
        return out

    def problem(self, ref: Ref, read: _Read | None = None) -> str:
        """Why `ref` no longer resolves in the working tree ("" when it does, or when this
        read's budget is spent before it could be told: never a false stale mark). Every part
        of a reason that came from the memory is escaped (store.safety.untrusted)."""
        return self._verdict(ref, _Read() if read is None else read)[1]

    def moved(self, ref: Ref) -> str | None:
        """The path git says `ref`'s file now has, when it is gone and git recorded its rename
        to a file that exists and still defines the ref's symbol; else None."""
        if not ref.path or ref.glob:
            return None
        read = _Read()
        if isinstance(self._stat(ref.path, read), _File):
            return None
        found = self._move(ref, read)
        return found[0] if found is not None and found[2] else None

    def _verdict(self, ref: Ref, read: _Read) -> tuple[str, str]:
        """(STALE or MOVED, why), or ("", "") when the ref resolves or cannot be told."""
        if not ref.path:
            return STALE, f"{untrusted.line(ref.text, 80)} is not a path inside the workspace"
        shown = untrusted.line(ref.path, 120)
        if ref.glob:
            found = self._glob_matches(ref.path, read)
            if found is _OUTSIDE:
                return STALE, f"{shown} leads outside the workspace"
            return ("", "") if found else (STALE, f"no file matches {shown}")
        entry = read.files[ref.path] if ref.path in read.files else self._stat(ref.path, read)
        read.files[ref.path] = entry
        if entry is _OUTSIDE:
            return STALE, f"{shown} leads outside the workspace"
        if entry is _UNKNOWN:
            return "", ""
        if not isinstance(entry, _File):
            move = self._move(ref, read)
            if move is None:
                return STALE, f"{shown} renamed or deleted"
            new, _pure, defined = move
            if not defined:
                symbol = untrusted.line(ref.symbol, 80)
                return (
                    STALE,
                    f"{shown} renamed to {untrusted.line(new, 120)}, which no longer defines {symbol}",
                )
            return MOVED, f"{shown} renamed to {untrusted.line(new, 120)} (git): {FOLLOWABLE}"
        if ref.symbol and ref.symbol not in self._names(entry):
            return STALE, f"{untrusted.line(ref.symbol, 80)} no longer defined in {shown}"
        return "", ""

    def _move(self, ref: Ref, read: _Read) -> tuple[str, bool, bool] | None:
        """(new path, a pure rename, the symbol still defined there) when git recorded a
        rename of the ref's file to one that exists now (looked at as any ref is)."""
        found = self._moves().follow(ref.path)
        if found is None:
            return None
        entry = read.files[found.path] if found.path in read.files else self._stat(found.path, read)
        read.files[found.path] = entry
        if not isinstance(entry, _File):
            return None
        defined = not ref.symbol or ref.symbol in self._names(entry)
        return found.path, found.pure, defined

    def _moves(self) -> renames.Renames:
        """Git's renames, read again when HEAD, its reflog or the index changed."""
        git_dir = self._git()
        if git_dir is None:
            return renames.Renames([])
        stamp = tuple(_stamp(os.path.join(git_dir, name)) for name in ("HEAD", "logs/HEAD", "index"))
        cached = self._renames
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found = renames.read(self.root)
        with self._lock:
            self._renames = (stamp, found)
        return found

    def _inside(self, rel: str, read: _Read) -> str | object:
        """The real path of `rel` when every link on the way resolves inside the workspace;
        _OUTSIDE as soon as one leads out (nothing past it is looked at, so a link to `/`
        cannot tell whether a file of the machine exists); _UNKNOWN once the budget is spent."""
        pending = [p for p in rel.split("/") if p not in ("", ".")]
        current, hops = self._root_real, 0
        while pending:
            part = pending.pop(0)
            candidate = os.path.join(current, part)
            if not read.spend():
                return _UNKNOWN
            try:
                mode = os.lstat(candidate).st_mode
            except (OSError, ValueError):
                return os.path.join(candidate, *pending)
            if not stat_mode.S_ISLNK(mode):
                current = candidate
                continue
            hops += 1
            try:
                target = os.path.normpath(os.path.join(current, os.readlink(candidate)))
            except (OSError, ValueError):
                return _OUTSIDE
            if hops > _MAX_LINKS or not _within(target, self._root_real):
                return _OUTSIDE
            pending = [
                p for p in os.path.relpath(target, self._root_real).split(os.sep) if p != "."
            ] + pending
            current = self._root_real
        return current

    def _stat(self, rel: str, read: _Read) -> _File | None | object:
        real = self._inside(rel, read)
        if not isinstance(real, str):
            return real
        try:
            found = os.stat(real)
        except (OSError, ValueError):
            return None
        if stat_mode.S_ISDIR(found.st_mode):
            return _File(real, found.st_mtime_ns, found.st_size, frozenset())
        if not stat_mode.S_ISREG(found.st_mode):
            return None
        cached = self._files.get(real)
        if cached is not None and (cached.mtime_ns, cached.size) == (found.st_mtime_ns, found.st_size):
            return cached
        fresh = _File(real, found.st_mtime_ns, found.st_size)
        with self._lock:
            if len(self._files) > _CACHE_LIMIT:
                self._files.clear()
            self._files[real] = fresh
        return fresh

    def _names(self, entry: _File) -> frozenset[str]:
        if entry.names is None:
            entry.names, entry.lines = self._read(entry)
        return entry.names

    def _read(self, entry: _File) -> tuple[frozenset[str], int]:
        """The defined names and line count of a cited file (its real path, already checked to
        be inside the workspace), only when not too big and still a regular file."""
        if entry.size > MAX_SCAN_BYTES:
            return frozenset(), 0
        try:
            fd = os.open(entry.real, os.O_RDONLY | fs_platform.OPEN_FLAGS)
            try:
                if not stat_mode.S_ISREG(os.fstat(fd).st_mode):
                    return frozenset(), 0
                data = os.read(fd, MAX_SCAN_BYTES + 1)
            finally:
                os.close(fd)
        except OSError:
            return frozenset(), 0
        text = data.decode("utf-8", "replace")
        return defined_names(text), text.count("\n") + (0 if text.endswith("\n") or not text else 1)

    def _glob_matches(self, pattern: str, read: _Read) -> bool | object:
        """Whether a file inside the workspace matches `pattern` (True when the budget ran out
        before it could be told), or _OUTSIDE when the folder it walks leads out."""
        parts = pattern.split("/")
        fixed: list[str] = []
        for part in parts:
            if any(ch in part for ch in "*?["):
                break
            fixed.append(part)
        if len(fixed) == len(parts):
            entry = self._stat(pattern, read)
            return entry if entry is _OUTSIDE else entry is not None
        base = self._inside("/".join(fixed), read) if fixed else self._root_real
        if not isinstance(base, str):
            return base if base is _OUTSIDE else True
        names, complete = self._listing(base, "/".join(fixed), read)
        for rel in names:
            if not read.spend():
                return True  # the budget ran out before it could be told
            if glob_match(rel, pattern):
                return True
        return not complete

    def _listing(self, base: str, prefix: str, read: _Read) -> tuple[tuple[str, ...], bool]:
        """Workspace-relative names of the files under `base` (links are listed, never
        followed), and whether the walk finished within the read's budget. Kept for
        GLOB_SECONDS while the folder's and git index's stamps stay the same."""
        signature = (_stamp(base), self._index_stamp())
        now = time.monotonic()
        cached = self._globs.get(base)
        if cached is not None and cached[1] == signature and now - cached[0] < GLOB_SECONDS:
            return cached[2], cached[3]
        found: list[str] = []
        complete = True
        for folder, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if d not in _UNWALKED]
            rel_folder = os.path.relpath(folder, base).replace(os.sep, "/")
            lead = prefix if rel_folder == "." else (f"{prefix}/{rel_folder}" if prefix else rel_folder)
            for name in files:
                if not read.spend():
                    complete = False
                    break
                found.append(f"{lead}/{name}" if lead else name)
            if not complete or not read.spend(len(dirs)):
                complete = False
                break
        listing = tuple(found)
        with self._lock:
            if len(self._globs) > 256:
                self._globs.clear()
            self._globs[base] = (now, signature, listing, complete)
        return listing, complete

    def _index_stamp(self) -> tuple[int, int] | None:
        git_dir = self._git()
        return _stamp(os.path.join(git_dir, "index")) if git_dir else None

    # --- review marks (git) --------------------------------------------------------------
    def _git(self) -> str | None:
        if self._git_dir is None:
            self._git_dir = False
            done = run_git(self.root, "rev-parse", "--absolute-git-dir")
            if done is not None and done.strip():
                self._git_dir = done.strip()
        return self._git_dir if isinstance(self._git_dir, str) else None

    def _fresh_git_key(self, git_dir: str) -> None:
        key = tuple(_stamp(os.path.join(git_dir, name)) for name in ("HEAD", "logs/HEAD"))
        if key != self._git_key:
            with self._lock:
                self._git_key = key
                self._churn = {}
                self._followed = set()

    def _prefetch_churn(self, memories: Sequence[Memory]) -> None:
        """Ask git once for the history of every cited file not yet known (one subprocess)."""
        git_dir = self._git()
        if git_dir is None:
            return
        self._fresh_git_key(git_dir)
        wanted: set[str] = set()
        for memory in memories:
            if memory.scope != "project":
                continue
            refs, updated, _ = self._parsed(memory)
            if updated is None:
                continue
            wanted.update(r.path for r in refs if r.path and not r.glob and r.path not in self._churn)
        if wanted:
            self._load_churn(sorted(wanted))

    def _load_churn(self, paths: Sequence[str], *, follow: bool = False) -> None:
        """The lines each commit changed in each of `paths`. With `follow` (asked only of a file
        that looks changed a lot), through git's renames: its former names are asked too, and a
        rename counts only the lines it changed (none for a pure one), so a moved file is not
        "changed a lot"; names are literal pathspecs (a clone's name is never pathspec magic)."""
        found: dict[str, list[tuple[int, int]]] = {p: [] for p in paths}
        moves = self._moves() if follow else renames.Renames([])
        alias = {old: path for path in paths for old in moves.former(path)}
        out = run_git(
            self.root,
            "--literal-pathspecs",
            "log",
            "-M",
            "--no-textconv",
            "--no-ext-diff",
            "--relative",
            "--numstat",
            "-z",
            "--format=@%ct",
            "--",
            *paths,
            *sorted(alias),
        )
        for when, path, lines in _numstat(out or ""):
            path = alias.get(path, path)
            if path in found:
                found[path].append((when, lines))
        with self._lock:
            self._churn.update(found)
            if follow:
                self._followed.update(paths)

    def _review(self, refs: Sequence[Ref], updated: float, read: _Read) -> list[Mark]:
        if self._git() is None:
            return []
        missing = [r.path for r in refs if r.path and not r.glob and r.path not in self._churn]
        if missing:
            self._load_churn(sorted(set(missing)))
        out = []
        for path in dict.fromkeys(r.path for r in refs if r.path and not r.glob):
            changed = sum(lines for when, lines in self._churn.get(path, ()) if when > updated)
            if changed < REVIEW_MIN_LINES:
                continue
            entry = read.files[path] if path in read.files else self._stat(path, read)
            if not isinstance(entry, _File):
                continue
            if entry.lines < 0:
                entry.names, entry.lines = self._read(entry)
            if changed >= REVIEW_SHARE * entry.lines and path not in self._followed:
                self._load_churn([path], follow=True)  # a rename may be most of it: ask through renames
                changed = sum(lines for when, lines in self._churn.get(path, ()) if when > updated)
            if changed >= max(REVIEW_MIN_LINES, REVIEW_SHARE * entry.lines):
                out.append(
                    Mark(
                        "review",
                        f"{untrusted.line(path, 120)} changed a lot since this memory was updated ({changed} lines)",
                    )
                )
        return out


def key(memory: Memory) -> str:
    """How reads name a memory in their marks: `id`, `user:id`, `note:id` (as verify does)."""
    if memory.tier == "working":
        return f"note:{memory.id}"
    return memory.id if memory.scope == "project" else f"user:{memory.id}"


_checkers: dict[str, Checker] = {}
_checkers_lock = threading.Lock()


def checker(workspace: Path) -> Checker:
    """The one Checker of a workspace in this process (its caches shared by every read)."""
    name = str(workspace)
    with _checkers_lock:
        found = _checkers.get(name)
        if found is None:
            found = _checkers[name] = Checker(workspace, git=os.environ.get("ENGRAM_GIT", "1") != "0")
        return found


def _numstat(output: str) -> list[tuple[int, str, int]]:
    """(commit time, path, lines added and deleted) of `log --numstat -z --format=@%ct`: a
    commit line `@time`, then `added<TAB>deleted<TAB>path`, or for a rename `added<TAB>deleted<TAB>`
    and its old and new names as the next two fields (the new name is the one returned)."""
    tokens = output.split("\0")
    found = []
    when, i = 0, 0
    while i < len(tokens):
        token = tokens[i].lstrip("\n")
        i += 1
        if token.startswith("@"):
            when = int(token[1:]) if token[1:].isdigit() else 0
            continue
        parts = token.split("\t", 2)
        if len(parts) != 3:
            continue
        path = parts[2]
        if not path:  # a rename: the old and the new name follow
            if i + 1 >= len(tokens):
                break
            path, i = tokens[i + 1], i + 2
        added = int(parts[0]) if parts[0].isdigit() else 0
        deleted = int(parts[1]) if parts[1].isdigit() else 0
        found.append((when, path, added + deleted))
    return found


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def _epoch(value: object) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
