"""The state and derived files of one scope, checked the way engram would read them, writing
nothing (for `engram doctor`, engram_mcp.hosts.doctor.health).

The rest, and why: docs/design.md, `store/write/state_check.py`.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from store.errors import NotRegular, Untrusted
from store.files import sealed
from store.files.fsutil import read_regular
from store.files.workspace import STATE_FILES, ScopeDir, state_file_problem
from store.read.index_file import IndexFile
from store.search.bm25 import TAG_KIND
from store.search.vector_extra import FILE_BYTES_BASE, FILE_BYTES_PER_MEMORY
from store.write.approvals import Pending
from store.write.transaction import KIND as JOURNAL_KIND

_SMALL_LIMIT: Final = 16 << 20
"""The most of usage.json, pending-approvals.json or journal.json read here (engram reads less)."""
_VECTORS_KIND: Final = "vectors"
_USAGE_KIND: Final = "usage"
_NO_TAG: Final = "carries no valid tag of this user's engram (it may have come with a clone)"


@dataclass(frozen=True, slots=True)
class StateProblem:
    """A state or derived file engram would not use as it is."""

    kind: str
    """`derived` (rebuilt on its own), `state` (its content is lost) or `unsafe` (not a file)."""
    file: str
    """Named within its scope (`.engram/usage.json`, `$ENGRAM_HOME/index.json`)."""
    message: str
    """What is wrong and what engram does with it."""


def check(scope: ScopeDir, key: bytes, *, memories: int) -> list[StateProblem]:
    """Every state and derived file of `scope` that engram would discard or refuse, checked
    with this user's key (`memories`: how many the store holds, which bounds vectors.bin)."""
    found: list[StateProblem] = []
    usable: set[str] = set()
    for name in STATE_FILES:
        reason = state_file_problem(scope, name)
        if reason is not None:
            found.append(StateProblem("unsafe", scope.display(scope.root / name), reason))
        elif os.path.lexists(scope.root / name):
            usable.add(name)
    checks: tuple[tuple[str, Callable[[ScopeDir, bytes, int], list[StateProblem]]], ...] = (
        ("index.json", _index),
        ("search.idx", _search),
        ("vectors.bin", _vectors),
        ("usage.json", _usage),
        ("pending-approvals.json", _pending),
        ("journal.json", _journal),
    )
    for name, checked in checks:
        if name in usable:
            found += checked(scope, key, memories)
    if "seals.log" in usable and "index.json" not in usable:  # else read with index.json
        found += _seals(scope, key)
    return found


def _index(scope: ScopeDir, key: bytes, memories: int) -> list[StateProblem]:
    """index.json (derived) and seals.log (state), read as a catalog reads them."""
    notices: list[tuple[str, str]] = []
    _, problem = IndexFile(scope, key=lambda: key, notice=lambda c, m: notices.append((c, m))).read()
    found = [StateProblem("derived", problem.file, problem.message)] if problem is not None else []
    return found + _seal_problems(scope, notices)


def _seals(scope: ScopeDir, key: bytes) -> list[StateProblem]:
    notices: list[tuple[str, str]] = []
    IndexFile(scope, key=lambda: key, notice=lambda c, m: notices.append((c, m))).read()
    return _seal_problems(scope, notices)


def _seal_problems(scope: ScopeDir, notices: list[tuple[str, str]]) -> list[StateProblem]:
    shown = scope.display(scope.seals_path)
    return [
        StateProblem("state", shown, message.removeprefix(shown + ": "))
        for _, message in notices
        if message.startswith(shown)
    ]


def _binary(scope: ScopeDir, name: str, kind: str, key: bytes, limit: int | None) -> list[StateProblem]:
    path = scope.root / name
    shown = scope.display(path)
    try:
        size = os.lstat(path).st_size
        if limit is not None and size > limit:
            return [
                StateProblem("derived", shown, f"larger than engram reads ({size:,} bytes); replaced unread")
            ]
        view = sealed.map_binary(path, key, kind)
    except FileNotFoundError:
        return []
    except Untrusted as exc:
        if exc.stale:  # an earlier engram's layout: rebuilt quietly
            return []
        return [StateProblem("derived", shown, f"{_NO_TAG}; discarded and rebuilt from the memory files")]
    except (OSError, ValueError) as exc:
        return [
            StateProblem("derived", shown, f"cannot be read ({_why(exc)}); rebuilt from the memory files")
        ]
    view.release()
    return []


def _search(scope: ScopeDir, key: bytes, memories: int) -> list[StateProblem]:
    return _binary(scope, "search.idx", TAG_KIND, key, None)


def _vectors(scope: ScopeDir, key: bytes, memories: int) -> list[StateProblem]:
    limit = FILE_BYTES_BASE + memories * FILE_BYTES_PER_MEMORY
    return _binary(scope, "vectors.bin", _VECTORS_KIND, key, limit)


def _read(scope: ScopeDir, name: str) -> tuple[bytes | None, list[StateProblem]]:
    path = scope.root / name
    try:
        return read_regular(path, _SMALL_LIMIT), []
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        return None, [StateProblem("state", scope.display(path), f"cannot be read ({_why(exc)})")]


def _tagged(scope: ScopeDir, key: bytes, path: Path, kind: str, lost: str) -> list[StateProblem]:
    """A sealed state file of `kind` that fails its tag: what is lost with it (`lost`)."""
    raw, found = _read(scope, path.name)
    if raw is None:
        return found
    try:
        sealed.load_object(key, kind, raw)
    except Untrusted:
        return [StateProblem("state", scope.display(path), f"{_NO_TAG}; {lost}")]
    return []


def _usage(scope: ScopeDir, key: bytes, memories: int) -> list[StateProblem]:
    return _tagged(scope, key, scope.usage_path, _USAGE_KIND, "its fetch counts are discarded")


def _pending(scope: ScopeDir, key: bytes, memories: int) -> list[StateProblem]:
    raw, found = _read(scope, "pending-approvals.json")
    if raw is None:
        return found
    shown = scope.display(scope.pending_path)
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return [StateProblem("state", shown, "does not parse; every proposal in it is lost")]
    book = Pending.read(scope.pending_path, lambda: key)
    proposals = data.get("proposals") if isinstance(data, dict) else None
    if not isinstance(proposals, dict):
        return [
            StateProblem(
                "state", shown, "holds no proposals engram can read; it is replaced at the next proposal"
            )
        ]
    refused = [hashed for hashed in book.records if not book.intact(hashed)]
    refused += [k for k, v in proposals.items() if not isinstance(v, dict)]
    if not refused:
        return []
    return [
        StateProblem(
            "state",
            shown,
            f"{len(refused)} of {len(proposals)} proposals {_NO_TAG}; they are discarded and their tokens fail",
        )
    ]


def _journal(scope: ScopeDir, key: bytes, memories: int) -> list[StateProblem]:
    """A journal of this user's (an interrupted commit) is fine: the next write or start
    completes it."""
    return _tagged(
        scope, key, scope.journal_path, JOURNAL_KIND, "it is discarded unapplied at the next write"
    )


def _why(exc: BaseException) -> str:
    if isinstance(exc, NotRegular) and exc.errno == errno.EFBIG:
        return "too large"
    if isinstance(exc, NotRegular):
        return "not a regular file"
    return (exc.strerror if isinstance(exc, OSError) else None) or type(exc).__name__
