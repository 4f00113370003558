"""All-or-nothing multi-file writes: a journal written first, applied, sealed, then removed.

A write that touches a memory or note file (or several files) first writes
`.engram/journal.json` (atomically) listing every file it will write or remove, with the new
bytes; then applies each through `write_atomic`; then records the files as engram's own writes
(`seal`: verify's seals); then deletes the journal. A crash before the journal exists changes
nothing; a crash after it is rolled forward by `recover` on the next write or start, which
seals what it wrote, so a kill at any instant never leaves engram's own write looking like a
hand edit. Callers hold the workspace lock.

A repository is untrusted input (SPEC §2), and a clone may carry a journal: entries name
files relative to their scope (`{"scope": "project", "path": "memory/x.md"}`), the journal
carries a tag keyed by the per-user secret, and `recover` discards — applying nothing — a
journal without a valid tag, or one with any entry that is absolute, holds `..`, is not one of
the files engram writes, or resolves (through links) outside its scope folder.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from store import secret
from store.fsutil import fsync_dir, read_regular, write_atomic

log = logging.getLogger("engram.store")

Write = tuple[Path, bytes | None]
"""A file and its new bytes; None removes it."""
Seal = Callable[[list[Path]], None]

KIND: Final = "journal"
VERSION: Final = 2
MAX_BYTES: Final = 256 << 20
_ALLOWED: Final = re.compile(
    r"(memory|working)/[a-z0-9][a-z0-9-]{0,63}\.md|pending-approvals\.json|config\.json"
)
"""The only files a journal may name, relative to their scope root."""


def run(
    journal: Path,
    writes: Sequence[Write],
    *,
    roots: Mapping[str, Path],
    key: bytes,
    seal: Seal | None = None,
) -> None:
    """Apply `writes` all or nothing and seal them. A single write of a state file needs no
    journal (its rename is atomic and nothing is sealed); anything else goes through one."""
    if len(writes) == 1 and writes[0][1] is not None and not _is_memory(writes[0][0]):
        write_atomic(writes[0][0], writes[0][1])
        return
    entries = [
        {**_relative(path, roots), "data": None if data is None else base64.b64encode(data).decode("ascii")}
        for path, data in writes
    ]
    payload = orjson.dumps({"version": VERSION, "writes": entries})
    write_atomic(journal, secret.wrap(key, KIND, payload))
    _apply(writes)
    if seal is not None:
        seal([path for path, _ in writes])
    journal.unlink()


def recover(
    journal: Path, *, roots: Mapping[str, Path], key: bytes, seal: Seal | None = None
) -> tuple[list[Path], str | None]:
    """Roll a leftover journal forward and seal its files: (files written or removed, notice).
    A journal that is not this user's engram's, or names a path outside its scope, is
    discarded unapplied and the notice says so."""
    try:
        raw = read_regular(journal, MAX_BYTES)
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], _discard(journal, str(exc.strerror or "it cannot be read"))
    payload = secret.unwrap(key, KIND, raw)
    if payload is None:
        return [], _discard(
            journal, "it carries no valid tag of this user's engram (it may have come with a clone)"
        )
    try:
        entries = orjson.loads(payload)["writes"]
        if not isinstance(entries, list):
            raise TypeError("writes is not a list")
        writes: list[Write] = []
        for entry in entries:
            target = _target(entry, roots)
            if target is None:
                shown = str(entry.get("path"))[:80] if isinstance(entry, dict) else "?"
                return [], _discard(journal, f"it names a path outside its scope ({shown!r})")
            data = entry["data"]
            writes.append((target, None if data is None else base64.b64decode(data, validate=True)))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return [], _discard(journal, "it cannot be read")
    _apply(writes)
    if seal is not None:
        seal([path for path, _ in writes])
    journal.unlink()
    log.warning("completed an interrupted commit from %s (%d files)", journal.name, len(writes))
    return [path for path, _ in writes], None


def _discard(journal: Path, why: str) -> str:
    """Remove a journal that is not applied; never raises. An entry that cannot be unlinked (a
    folder planted at `journal.json`) stays, and the notice says to remove it: writes are
    refused with ENGRAM_UNSAFE_PATH until then (`workspace.check_scope`)."""
    notice = f"{journal.name} was discarded and nothing in it was applied: {why}"
    try:
        journal.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        notice += f"; remove .engram/{journal.name} (engram writes it itself)"
    log.warning("%s", notice)
    return notice


def _is_memory(path: Path) -> bool:
    return path.parent.name in ("memory", "working")


def _relative(path: Path, roots: Mapping[str, Path]) -> dict[str, str]:
    for scope, root in roots.items():
        if path.parent == root or root in path.parents:
            rel = path.relative_to(root).as_posix()
            if _ALLOWED.fullmatch(rel):
                return {"scope": scope, "path": rel}
    raise ValueError(f"{path.name}: engram's journal only holds files of its scopes")


def _target(entry: Any, roots: Mapping[str, Path]) -> Path | None:
    """The file an entry names, or None when it is not one engram writes inside its scope."""
    if not isinstance(entry, dict):
        return None
    scope, rel = entry.get("scope"), entry.get("path")
    root = roots.get(scope) if isinstance(scope, str) else None
    if root is None or not isinstance(rel, str) or not _ALLOWED.fullmatch(rel):
        return None  # absolute paths, `..`, `\\` and NUL never match the pattern
    real_root = root.resolve()
    real = (real_root / rel).resolve()
    if real_root not in real.parents:
        return None
    return root / rel


def _apply(writes: Sequence[Write]) -> None:
    for path, data in writes:
        if data is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            write_atomic(path, data, sync_dir=False)
    for folder in sorted({path.parent for path, _ in writes}):
        fsync_dir(folder)
