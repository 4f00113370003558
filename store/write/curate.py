"""What a person does to memory directly (SPEC §7): retire, restore, delete and replace a memory
file, and list or cancel pending proposals.

The rest, and why: docs/design.md, `store/write/curate.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from store.errors import CorruptMemory, InvalidChange, NotFound, StaleEdit
from store.files.fsutil import read_regular
from store.files.ids import check_id
from store.files.memory import MAX_FILE_BYTES, Memory, iso, parse_memory, render_checked, split_front_matter
from store.write import transaction
from store.write.approvals import Pending, token_hash

if TYPE_CHECKING:
    from store.store import Store

BOTH_SCOPES: Final = ("project", "user")


@dataclass(frozen=True, slots=True)
class Change:
    id: str
    scope: str
    file: str
    """The file, named relative to its scope (`.engram/memory/x.md`)."""
    status: str
    """What the memory is now: active, retired, or deleted."""
    changed: bool


def _file_of(store: Store, memory: Memory) -> Path:
    scope = store.user if memory.scope == "user" else store.project
    folder = scope.working_dir if memory.tier == "working" else scope.memory_dir
    return folder / f"{memory.id}.md"


def _display(store: Store, memory: Memory, path: Path) -> str:
    return (store.user if memory.scope == "user" else store.project).display(path)


def file_name(store: Store, memory: Memory) -> str:
    """A memory's file as users see it: `.engram/memory/<id>.md`, `$ENGRAM_HOME/memory/<id>.md`."""
    return _display(store, memory, _file_of(store, memory))


def find(store: Store, memory_id: object) -> Memory:
    """The memory a person names: a durable memory of any status (project shadows user), else a
    live working note. NotFound names the command that lists ids; CorruptMemory the problem of a
    file with that id that is there but unusable."""
    wanted = check_id(memory_id)
    view = store.view()
    found = view.durable.get(wanted) or view.notes.get(wanted)
    if found is None:
        if (broken := view.broken_file(wanted)) is not None:
            raise broken.error()  # there, but unusable: the problem, not "no memory"
        raise NotFound(f"no memory with id {wanted!r}: `engram list` shows the ids")
    return found


def read_file(store: Store, memory: Memory) -> tuple[bytes, dict[str, Any], str]:
    """(bytes, front matter, body) of a memory's file as it is on disk now."""
    path = _file_of(store, memory)
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except OSError:
        raise NotFound(f"the file of {memory.id!r} is gone; nothing was written") from None
    meta, body = split_front_matter(data.decode("utf-8", "replace"))
    return data, meta, body


def _locked_memory(store: Store, memory_id: str) -> Memory:
    """The memory again, from the view the write lock's sweep just refreshed."""
    view = store.view(recent_ok=True)
    found = view.durable.get(memory_id) or view.notes.get(memory_id)
    if found is None:
        raise NotFound(f"no memory with id {memory_id!r} (it went away meanwhile); nothing was written")
    return found


def set_status(store: Store, memory_id: object, status: str) -> Change:
    """Retire (`retired`) or restore (`active`) a durable memory: its file rewritten with that
    status and a fresh `updated`, every other key kept. A superseded memory is left alone (it
    already stays out of reads, and its successor names it); a working note cannot be retired
    (it expires; `forget --delete` removes it)."""
    wanted = check_id(memory_id)
    find(store, wanted)
    with transaction.write_lock(store, BOTH_SCOPES):
        memory = _locked_memory(store, wanted)
        path = _file_of(store, memory)
        shown = _display(store, memory, path)
        if memory.tier == "working":
            raise InvalidChange(
                f"{wanted!r} is a working note: notes expire on their own; `engram forget {wanted} "
                "--delete` removes it now. Nothing was written"
            )
        if memory.status == status:
            return Change(wanted, memory.scope, shown, status, False)
        if memory.status == "superseded":
            successor = memory.meta.get("superseded_by")
            raise InvalidChange(
                f"{wanted!r} is superseded"
                + (f" by {successor!r}" if isinstance(successor, str) else "")
                + ": it already stays out of reads; forget or edit its successor instead. Nothing was written"
            )
        _, meta, body = read_file(store, memory)
        meta = dict(meta)
        meta["status"] = status
        meta["updated"] = iso(store.now())
        try:
            data = render_checked(meta, body, scope=memory.scope, tier=memory.tier)
        except CorruptMemory as exc:
            raise InvalidChange(
                f"{shown} would not load back ({exc.message}); fix it with `engram edit {wanted}`. "
                "Nothing was written"
            ) from None
        transaction.apply(store, [(path, data)])
    return Change(wanted, memory.scope, shown, status, True)


def delete(store: Store, memory_id: object) -> Change:
    """Remove a memory's file (a durable memory of any status, or a working note)."""
    wanted = check_id(memory_id)
    find(store, wanted)
    with transaction.write_lock(store, BOTH_SCOPES):
        memory = _locked_memory(store, wanted)
        path = _file_of(store, memory)
        transaction.apply(store, [(path, None)])
    return Change(wanted, memory.scope, _display(store, memory, path), "deleted", True)


def replace(store: Store, memory_id: object, original: bytes, edited: bytes) -> Change:
    """Write a person's edit of a memory file, `original` being the bytes they started from.

    The edit is parsed exactly as a read would (front matter, id matching the file name, type,
    title, status…); a file engram would refuse to load is refused with the reason and nothing
    is written. So is an edit of a file that changed on disk meanwhile (StaleEdit)."""
    wanted = check_id(memory_id)
    memory = find(store, wanted)
    try:
        parse_memory(edited, file_id=wanted, scope=memory.scope, tier=memory.tier)
    except CorruptMemory as exc:
        raise CorruptMemory(f"the edited file would not load: {exc.message}; nothing was written") from None
    with transaction.write_lock(store, BOTH_SCOPES):
        memory = _locked_memory(store, wanted)
        path = _file_of(store, memory)
        current, _, _ = read_file(store, memory)
        if current != original:
            raise StaleEdit(
                f"{_display(store, memory, path)} changed on disk while you edited it; nothing was "
                f"written: run `engram edit {wanted}` again"
            )
        changed = edited != original
        if changed:
            transaction.apply(store, [(path, edited)])
    status = split_front_matter(edited.decode("utf-8"))[0].get("status", "active")
    return Change(wanted, memory.scope, _display(store, memory, path), str(status), changed)


@dataclass(frozen=True, slots=True)
class Proposal:
    """A proposal still waiting for approval, as `engram pending` lists it."""

    n: int
    """Its place in the list, oldest first: what `engram pending --cancel N` names."""
    ref: str
    """The first 12 hex digits of its token's hash (the token itself is never stored)."""
    origin: str
    created: str
    expires: str
    candidates: list[dict[str, Any]]


def pending(store: Store) -> list[Proposal]:
    """Every proposal still waiting for approval, oldest first."""
    now = store.now()
    found = Pending.read(store.project.pending_path, store.key).open(now)
    return [
        Proposal(
            n,
            hashed[:12],
            str(record.get("origin", "")),
            iso(float(record.get("created", 0))),
            iso(float(record.get("expires", 0))),
            [
                {
                    "n": c.get("n"),
                    "verdict": c.get("verdict", {}).get("kind"),
                    "id": c.get("verdict", {}).get("id"),
                    "type": c.get("type"),
                    "title": c.get("title"),
                }
                for c in record.get("candidates", [])
                if isinstance(c, dict)
            ],
        )
        for n, (hashed, record) in enumerate(found, 1)
    ]


def cancel(store: Store, which: str) -> Proposal:
    """Cancel a waiting proposal named by its place in `pending` (N), its token, or its `ref`;
    its token then fails with ENGRAM_DECLINED. NotFound when nothing waiting matches."""
    with transaction.write_lock(store, memories=False):
        now = store.now()
        book = Pending.read(store.project.pending_path, store.key)
        waiting = book.open(now)
        chosen: tuple[int, str] | None = None
        for n, (hashed, _) in enumerate(waiting, 1):
            if (
                which == str(n)
                or token_hash(which) == hashed
                or (len(which) >= 8 and hashed.startswith(which))
            ):
                chosen = (n, hashed)
                break
        if chosen is None:
            raise NotFound(
                f"no waiting proposal {which[:40]!r}: `engram pending` lists them (numbers 1 to "
                f"{len(waiting)})"
                if waiting
                else "no proposal is waiting for approval"
            )
        listed = pending(store)[chosen[0] - 1]
        book.set_status(chosen[1], "cancelled")
        transaction.apply(store, [(store.project.pending_path, book.render(now))])
    return listed
