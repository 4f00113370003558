"""Host session files, read as hostile input: bounded, never through a link out of the host's
folder, never blocking on a FIFO, never fatal on a malformed line.

Every file a host keeps is something an agent's shell could have written: a line may be
megabytes long, a file may be a link to anywhere, a FIFO, or not JSON at all. `contained`
resolves a path and keeps it only when it stays inside the host's own folder (itself resolved,
so a `~/.claude` kept as a dotfiles link still works); `jsonl` yields the JSON objects of one
file within a byte budget, counting what it skips; `listing` names the session files of one
folder without following a link to a folder.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from store.errors import NotRegular
from store.files.fsutil import open_regular

MAX_FILE: Final = 256 << 20
"""Bytes read of one session file (about half a second of parsing); the rest is left unread."""
MAX_LINE: Final = 4 << 20
"""Bytes of one JSONL line: a longer one is tool output or a paste, skipped."""
MAX_LISTED: Final = 20_000
"""Entries looked at in one host folder."""


@dataclass(slots=True)
class Skips:
    """What was left out of a read, said in the preview."""

    lines: int = 0


def contained(path: Path, root: Path) -> Path | None:
    """`path` resolved, when it exists and stays inside `root` (resolved too); else None."""
    try:
        real = path.resolve(strict=True)
        base = root.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return real if real.is_relative_to(base) else None


def listing(
    folder: Path,
    root: Path,
    *,
    prefix: str = "",
    suffixes: tuple[str, ...] = (".jsonl",),
    recursive: bool = False,
) -> list[tuple[float, Path, Path]]:
    """(mtime, path, resolved path) of each regular file `prefix…suffix` in `folder`, newest first.

    Links to folders are not walked; a linked file counts only when it resolves inside `root`,
    and so does `folder` itself."""
    found: list[tuple[float, Path, Path]] = []
    if contained(folder, root) is None:
        return found
    seen = 0
    for parent, dirs, files in os.walk(folder, followlinks=False):
        if not recursive:
            dirs.clear()
        dirs.sort(reverse=True)  # dated folders and names: the newest are looked at first
        for name in sorted(files, reverse=True):
            seen += 1
            if seen > MAX_LISTED:
                break
            if not (name.startswith(prefix) and name.endswith(suffixes)):
                continue
            path = Path(parent, name)
            real = contained(path, root)
            try:
                info = real.stat() if real is not None else None
            except OSError:
                continue
            if info is not None and real is not None and stat.S_ISREG(info.st_mode):
                found.append((info.st_mtime, path, real))
        if seen > MAX_LISTED:
            break
    return sorted(found, key=lambda f: (-f[0], str(f[1])))


def _open(path: Path) -> Any:
    """A binary handle on the regular file `path` (already resolved), or None."""
    try:
        return os.fdopen(open_regular(path), "rb")
    except (OSError, NotRegular):
        return None


def _lines(handle: Any, left: int, skips: Skips) -> Iterator[bytes]:
    """The lines of `handle` within `left` bytes; a line over MAX_LINE is skipped and counted."""
    while left > 0:
        raw = handle.readline(min(MAX_LINE + 1, left))
        if not raw:
            return
        left -= len(raw)
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            skips.lines += 1
            while left > 0 and (rest := handle.readline(min(MAX_LINE, left))):  # the rest of it
                left -= len(rest)
                if rest.endswith(b"\n"):
                    break
            continue
        yield raw


def jsonl(path: Path, skips: Skips, limit: int = MAX_FILE) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, one per line; other lines are counted in `skips`.

    Of a file over `limit` bytes, the first line (a host's session header) and the last
    `limit` bytes are read: the newest part of a session is the one the human means."""
    handle = _open(path)
    if handle is None:
        skips.lines += 1
        return
    with handle:
        size = os.fstat(handle.fileno()).st_size
        lines = _lines(handle, limit, skips)
        if size > limit:
            first = next(_lines(handle, MAX_LINE + 1, skips), None)
            head = [first] if first is not None else []
            handle.seek(size - limit)
            handle.readline(MAX_LINE)  # the line the cut fell in
            skips.lines += 1
            lines = itertools.chain(head, _lines(handle, limit, skips))
        for raw in lines:
            if not raw.strip():
                continue
            try:
                item = orjson.loads(raw)
            except orjson.JSONDecodeError:
                skips.lines += 1
                continue
            if isinstance(item, dict):
                yield item
            else:
                skips.lines += 1


def json_document(path: Path, skips: Skips, limit: int = MAX_FILE) -> Any:
    """The JSON value of a whole file (None, counted, when unreadable, too large or not JSON)."""
    handle = _open(path)
    if handle is None:
        skips.lines += 1
        return None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        # read(n) allocates n bytes up front: ask for what the file holds (one more shows growth)
        data = handle.read(size + 1) if size <= limit else b""
    if size > limit or len(data) > limit:
        skips.lines += 1
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        skips.lines += 1
        return None


def shown(path: Path, home: Path) -> str:
    """`path` as the human knows it: `~/…` under HOME."""
    for base in dict.fromkeys((home, home.resolve())):
        if path.is_relative_to(base):
            rest = path.relative_to(base).as_posix()
            return "~" if rest == "." else "~/" + rest
    return str(path)
