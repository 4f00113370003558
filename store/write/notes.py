"""Working notes (SPEC §4.4): short task notes that expire, kept apart from durable memory."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from store.errors import CorruptMemory, InvalidNote, Refused
from store.files.ids import slugify, unique_id
from store.files.memory import iso, render_checked
from store.safety import untrusted
from store.safety.instructions import instruction_line
from store.safety.invisible import describe, first_invisible, invisible_reference
from store.safety.redact import redact
from store.write.transaction import Write, apply, write_lock

if TYPE_CHECKING:
    from store.store import Store

MAX_TITLE: Final = 80


@dataclass(frozen=True, slots=True)
class NoteDraft:
    id: str
    title: str
    text: str
    objective: str
    kind: str | None
    scope: str
    redactions: int


def draft_note(
    store: Store, text: str, objective: str = "", kind: str | None = None, scope: str = "project"
) -> NoteDraft:
    """Redact text and objective, refuse instruction-like lines (on normalised text, named as
    written), choose an id; writes nothing. Text or objective holding a character the human
    cannot see (store/safety/invisible.py) is refused with ENGRAM_VALIDATION naming the field, after
    the instruction filter (which reads through them), so a hidden instruction is named as one."""
    clean, redactions = redact(text)
    clean = clean.strip()
    objective, in_objective = redact(objective)
    redactions += in_objective
    if not clean:
        raise Refused("the note is empty after redaction; nothing was saved")
    found = instruction_line(clean)
    if found is not None:
        number, line = found
        raise Refused(
            f"line {number} reads like an instruction to the agent, not a note: "
            f'"{untrusted.line(line, 120)}"; '
            "rephrase it as an observation. Nothing was saved."
        )
    found = instruction_line(objective)
    if found is not None:
        raise Refused(
            f'the objective reads like an instruction to the agent: "{untrusted.line(found[1], 120)}"; '
            "state the task instead. Nothing was saved."
        )
    for name, value in (("text", text), ("objective", objective)):
        bad = first_invisible(value) or invisible_reference(value)
        if bad is not None:
            shown = describe(bad) if len(bad) == 1 else f"reference {bad}"
            raise InvalidNote(
                f"the note {name} contains the invisible character {shown}, which the human "
                "would not see: remove it and save again. Nothing was saved."
            )
    first = clean.splitlines()[0]
    title = first if len(first) <= MAX_TITLE else first[: MAX_TITLE - 1].rstrip() + "…"
    view = store.view()
    taken = set(view.durable) | {m.id for s in view.snapshots for m in s.memories if m.tier == "working"}
    note_id = unique_id(slugify(title), taken)
    draft = NoteDraft(note_id, title, clean, " ".join(objective.split()), kind, scope, redactions)
    _render(store, draft)  # refuse now what could not be loaded back (a NUL in the title…)
    return draft


def save_note(store: Store, draft: NoteDraft) -> dict[str, Any]:
    """Write `working/<id>.md` with its expiry; never touches durable memory."""
    with write_lock(store):
        path, data, result = note_write(store, draft)
        apply(store, [(path, data)])
    return result


def note_write(store: Store, draft: NoteDraft) -> tuple[Path, bytes, dict[str, Any]]:
    """The file a note becomes; the caller holds the lock and writes it."""
    data, valid_until = _render(store, draft)
    path = store.project.working_dir / f"{draft.id}.md"
    if path.exists():
        raise Refused(f"a note {draft.id!r} was saved meanwhile; nothing was saved, try again")
    result = {"id": draft.id, "file": store.project.display(path), "valid_until": valid_until}
    return path, data, result


def _render(store: Store, draft: NoteDraft) -> tuple[bytes, str]:
    """(file bytes, valid_until), parsed back first: never a note engram would refuse to load."""
    now = store.now()
    stamp = iso(now)
    ttl = store.config().working_ttl_days
    valid_until = (datetime.fromtimestamp(now, UTC).date() + timedelta(days=ttl)).isoformat()
    meta: dict[str, Any] = {
        "id": draft.id,
        "type": "note",
        "title": draft.title,
        "tier": "working",
        "scope": draft.scope,
        "objective": draft.objective,
        "valid_until": valid_until,
        "status": "active",
        "created": stamp,
        "updated": stamp,
        "source": "note",
    }
    if draft.kind:
        meta["kind"] = draft.kind
    try:
        return render_checked(meta, draft.text + "\n", scope=draft.scope, tier="working"), valid_until
    except CorruptMemory as exc:
        raise InvalidNote(f"the note would not load back: {exc.message}; nothing was saved") from None


def gc(store: Store) -> list[str]:
    """Remove expired notes; return their ids."""
    today = datetime.fromtimestamp(store.now(), UTC).date().isoformat()
    with write_lock(store):
        view = store.view(recent_ok=True)  # the write lock's sweep just ran
        expired = [
            m
            for s in view.snapshots
            for m in s.memories
            if m.tier == "working" and m.scope == "project" and m.valid_until[:10] < today
        ]
        writes: list[Write] = [(store.project.working_dir / f"{m.id}.md", None) for m in expired]
        if writes:
            apply(store, writes)
    return sorted(m.id for m in expired)
