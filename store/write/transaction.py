"""Every write to the store, all or nothing: the workspace lock, the journal, the seals.

The rest, and why: docs/design.md, `store/write/transaction.py`.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import re
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

from store.errors import NoWorkspace, ReadOnly, StoreError, UnsafePath, Untrusted
from store.files import sealed
from store.files.fsutil import fsync_dir, read_regular, write_atomic
from store.files.lock import workspace_lock
from store.files.workspace import check_scope, ensure_gitignore, init_scope, write_refusal

if TYPE_CHECKING:
    from store.read.view import View
    from store.store import Store

log = logging.getLogger("engram.store")

Write = tuple[Path, bytes | None]
"""A file and its new bytes; None removes it."""

KIND: Final = "journal"
VERSION: Final = 2
MAX_BYTES: Final = 256 << 20
_ALLOWED: Final = re.compile(
    r"(memory|working)/[a-z0-9][a-z0-9-]{0,63}\.md|pending-approvals\.json|config\.json"
)
"""The only files a journal may name, relative to their scope root."""


@contextmanager
def write_lock(
    store: Store, scopes: Sequence[str] = ("project",), *, memories: bool = True
) -> Iterator[None]:
    """The workspace lock (and the user scope's when it is written), journal recovered; when the
    operation writes memories, a view that has re-stat'ed every file first."""
    if store.read_only:
        raise ReadOnly("this engram runs read-only (--read-only or ENGRAM_READ_ONLY=1); nothing was written")
    if store.home_problem is not None:  # its lock and its secret live there: nothing could be sealed
        raise UnsafePath(store.home_refusal("; nothing was written"))
    check_scope(store.project)  # a link leading outside is refused before any lock or write
    if "user" in scopes:
        check_scope(store.user)
    check_workspace(store)
    if not store.project.root.is_dir():
        init_scope(store.project)  # the first write in a git root creates .engram/ with its .gitignore
    with ExitStack() as stack:
        stack.enter_context(workspace_lock(store.project.lock_path))
        if "user" in scopes:
            stack.enter_context(workspace_lock(store.user.lock_path))
        ensure_gitignore(store.project)  # an existing one missing lines is completed
        recover_locked(store)
        if memories:
            store.view(sweep=True)  # take in every change made before the lock was ours
        yield


_STORE_TAGS: weakref.WeakKeyDictionary[Store, str] = weakref.WeakKeyDictionary()


def view_stamp(store: Store, view: View) -> list[Any]:
    """What verdicts are judged against, as JSON a proposal record can carry (`judged`): this
    Store object (a random tag: catalog versions count per process, from 0), its view's key
    (catalog versions and the day) and the dedup thresholds. A commit that finds its view with
    the same stamp takes the proposal's verdicts instead of judging again (store.write.commits);
    any other process, store, change or day has another stamp."""
    tag = _STORE_TAGS.get(store)
    if tag is None:
        tag = _STORE_TAGS.setdefault(store, os.urandom(8).hex())
    config = store.config()
    return [tag, *view.key, config.dedup_duplicate, config.dedup_related]


def check_workspace(store: Store) -> None:
    """Before a write (or before asking the human about one): NoWorkspace unless the workspace
    is initialised or a git root (store.files.workspace.write_refusal)."""
    reason = write_refusal(store.workspace)
    if reason is not None:
        raise NoWorkspace(reason)


@contextmanager
def scope_locks(store: Store) -> Iterator[None]:
    """The workspace lock, and the user scope's, of the scopes that exist (writers' order)."""
    with ExitStack() as stack:
        for catalog in store.catalogs:
            if catalog.scope.root.is_dir():
                stack.enter_context(workspace_lock(catalog.scope.lock_path))
        yield


def apply(store: Store, writes: Sequence[Write]) -> None:
    """Write files all or nothing through the journal and seal them (caller holds the lock)."""
    key = store.key()  # the per-user secret exists from the first write on, whatever it writes
    if len(writes) == 1 and writes[0][1] is not None and not _is_memory(writes[0][0]):
        write_atomic(writes[0][0], writes[0][1])
        return
    journal = store.project.journal_path
    roots = _roots(store)
    entries = [
        {**_relative(path, roots), "data": None if data is None else base64.b64encode(data).decode("ascii")}
        for path, data in writes
    ]
    payload = orjson.dumps({"version": VERSION, "writes": entries, "agent_shell": store.agent_shell})
    write_atomic(journal, sealed.seal(key, KIND, payload))
    try:
        _apply(writes)
        seal(store, [path for path, _ in writes])
    except StoreError as exc:  # a seal refused (seals.log planted as a link): the files are in
        exc.changed = True
        raise
    journal.unlink()


def recover(store: Store) -> None:
    """At start: finish a commit a crash interrupted (every write does it too). A scope that
    leads outside itself is left alone (its writes are refused with ENGRAM_UNSAFE_PATH)."""
    if store.read_only or not os.path.lexists(store.project.journal_path):
        return
    try:
        check_scope(store.project)
    except UnsafePath as exc:
        store.notice(exc.code, exc.message)
        return
    with workspace_lock(store.project.lock_path):
        recover_locked(store)


def recover_locked(store: Store) -> None:
    """Roll an interrupted commit forward (the caller holds the lock) and record the files it
    rewrote as engram's own, so verify does not report them as hand edits. A journal that is
    not this user's engram's, or names a path outside its scope, is discarded unapplied."""
    if not os.path.lexists(store.project.journal_path):
        return
    paths, notice = _roll_forward(store)
    if notice:
        store.notice("ENGRAM_UNTRUSTED", f"{store.project.label}/{notice}")
    store.recovered += len(paths)


def seal(store: Store, paths: Sequence[Path], *, agent_shell: bool | None = None) -> None:
    """Record the files engram itself just wrote as reviewed, so verify stays clean; a write
    made from an agent's shell (`store.agent_shell`, or the journal's record of it) is sealed
    as such instead, and verify lists it for the human's review (SPEC §7)."""
    marked = store.agent_shell if agent_shell is None else agent_shell
    for catalog in store.catalogs:
        keys = set()
        for path in paths:
            for tier, folder in (
                ("durable", catalog.scope.memory_dir),
                ("working", catalog.scope.working_dir),
            ):
                if path.parent == folder:
                    keys.add(f"{tier}/{path.stem}")
        if keys:
            catalog.note_written(list(paths))
            catalog.seal(keys, agent_shell=marked)


def _roll_forward(store: Store) -> tuple[list[Path], str | None]:
    """Apply a leftover journal and seal its files: (files written or removed, notice)."""
    journal = store.project.journal_path
    key = store.key()
    try:
        raw = read_regular(journal, MAX_BYTES)
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], _discard(journal, str(exc.strerror or "it cannot be read"))
    try:
        loaded = sealed.load_object(key, KIND, raw)
    except Untrusted:
        return [], _discard(
            journal, "it carries no valid tag of this user's engram (it may have come with a clone)"
        )
    roots = _roots(store)
    try:
        entries, marked = loaded["writes"], loaded.get("agent_shell") is True
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
    seal(store, [path for path, _ in writes], agent_shell=marked)
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


def _roots(store: Store) -> dict[str, Path]:
    return {"project": store.project.root, "user": store.user.root}


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
    try:
        real_root = root.resolve()
        real = (real_root / rel).resolve()
    except (OSError, RuntimeError):  # a link loop on the way: not a file of the scope
        return None
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
