"""Proposals (SPEC §4.1–4.2): candidates with their verdicts, shown and recorded, writing no memory.

A proposal's entries are computed without side effects (`draft`), then either recorded in
`pending-approvals.json` with a one-time approval token (`store_proposal`) or applied at once
after the human approved them in the host's dialog (store.write.commits). What an entry would write
is rendered and parsed back here, so a file engram could not load back is refused before the
human is asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from store.code import staleness
from store.code.validity import expired_ids
from store.errors import CorruptMemory, InvalidCandidate, NotFound
from store.files.ids import check_id
from store.files.memory import DURABLE_TYPES, Memory, render_checked
from store.propose import pool
from store.propose.candidates import make_candidates
from store.propose.code_fields import shown_code_fields, with_code_meta, with_refs
from store.propose.verdicts import Candidate, Known, Verdict, decide
from store.write import transaction
from store.write.approvals import TOKEN_TTL_SECONDS, Pending, mint
from store.write.proposal_entry import Before, ProposalEntry

if TYPE_CHECKING:
    from store.read.view import View
    from store.store import Store


@dataclass(slots=True)
class Preview:
    """A stored proposal as the proposer sees it; `token` is shown once."""

    token: str
    expires: float
    candidates: list[ProposalEntry]
    redactions: int
    dropped: int = 0
    """Older open proposals dropped to keep pending-approvals.json within its caps."""
    before: Mapping[int, Before] = field(default_factory=dict)
    """The memory each UPDATE or SUPERSEDE changes, by candidate number (`targets`)."""


def targets(store: Store, entries: Sequence[ProposalEntry], view: View | None = None) -> dict[int, Before]:
    """The memory each UPDATE or SUPERSEDE entry changes, in the entry's own scope; an entry
    whose target is gone has none (its commit defers it)."""
    wanted = [e for e in entries if e.verdict.kind in ("UPDATE", "SUPERSEDE")]
    if not wanted:
        return {}
    view = view or store.view()
    scoped = known(view)
    check = staleness.checker(store.workspace)
    found: dict[int, Before] = {}
    for e in wanted:
        memory = scoped.in_scope(e.scope, e.verdict.target or e.verdict.id)
        if memory is not None:
            found[e.n] = Before(
                id=memory.id,
                title=memory.title,
                body=memory.body,
                tags=tuple(memory.tags),
                paths=tuple(memory.paths),
                changed=e.verdict.target_hash is not None and memory.hash != e.verdict.target_hash,
                refs=tuple(memory.refs),
                valid_until=memory.valid_until,
                review_after=memory.review_after,
                always=memory.always,
                unresolved=tuple(check.unresolved(_refs(e))) if e.scope == "project" else (),
                seen=view.key,
            )
    return found


def drafted(entries: Sequence[ProposalEntry]) -> dict[int, Before]:
    """The targets `draft` read with the entries (each entry's `before`), by candidate number."""
    return {e.n: e.before for e in entries if e.before is not None}


def current(store: Store, entries: Sequence[ProposalEntry]) -> dict[int, Before]:
    """The targets as the store holds them now: the drafted ones while the store's view is the
    one they were read in, else read again (a memory changed since the draft)."""
    if not any(e.verdict.kind in ("UPDATE", "SUPERSEDE") for e in entries):
        return {}
    view = store.view()
    found = drafted(entries)
    fresh = all(e.n in found for e in entries if e.verdict.kind in ("UPDATE", "SUPERSEDE"))
    if fresh and all(b.seen == view.key for b in found.values()):
        return found
    return targets(store, entries, view)


def _refs(entry: ProposalEntry) -> list[str]:
    """The refs the entry's file will hold (its shown fields)."""
    refs = (entry.fields or {}).get("refs")
    return [str(r) for r in refs] if isinstance(refs, list) else []


def known(view: View) -> Known:
    """The durable memories of `view` by scope, for scope-true verdicts."""

    def hidden_user(memory_id: str) -> Memory | None:
        return next(
            (
                m
                for s in view.snapshots
                for m in s.memories
                if m.scope == "user" and m.tier == "durable" and m.id == memory_id
            ),
            None,
        )

    return Known(view.durable, hidden_user)


def verdicts(store: Store, candidates: Sequence[Candidate], view: View | None = None) -> list[Verdict]:
    view = view or store.view()
    config = store.config()
    taken = expired_ids(view.snapshots, view.key[-1])  # store.code.validity: an expired id stays taken
    scoped = known(view)
    return [
        decide(
            c,
            scoped,
            lambda text: pool.similar_pool(store, text, view),
            taken,
            duplicate=config.dedup_duplicate,
            related=config.dedup_related,
        )
        for c in candidates
    ]


def draft(
    store: Store, raw: Sequence[dict[str, Any]], notes: Sequence[str | None] = ()
) -> tuple[list[ProposalEntry], int]:
    """The numbered preview entries of a proposal, computed without writing anything; each
    UPDATE's and SUPERSEDE's `before` is read in the same view, for the next step to show
    (`drafted`) and store (`store_proposal`) without reading it again."""
    candidates, redactions = make_candidates(raw)
    candidates = with_refs(
        store.workspace, candidates
    )  # store.propose.code_fields: extracted at proposal time
    view = store.view(recent_ok=True)
    found = verdicts(store, candidates, view)
    notes = list(notes) or [None] * len(candidates)
    entries = []
    for n, (c, v) in enumerate(zip(candidates, found, strict=True), 1):
        if v.kind == "NOOP":
            fields: dict[str, Any] = {}
        else:
            meta = meta_for(c, v, known(view), "")
            render_entry(n, meta, c.body, c.scope)
            fields = shown_fields(meta, c.scope)
        entries.append(
            ProposalEntry(
                n=n,
                type=c.type,
                title=c.title,
                scope=c.scope,
                verdict=Verdict.of(v.record()),
                similar=v.similar,
                body=c.body,
                tags=c.tags,
                paths=c.paths,
                fields=fields,
                refs=c.refs or (),
                valid_until=c.valid_until,
                review_after=c.review_after,
                supersedes=c.supersedes,
                requested_id=c.id,
                always=c.always,
                note=notes[n - 1],
            )
        )
    found_targets = targets(store, entries, view)  # what the preview, the dialog and the store show
    judged = transaction.view_stamp(store, view)
    return [replace(e, before=found_targets.get(e.n), judged=judged) for e in entries], redactions


def store_proposal(
    store: Store, entries: Sequence[ProposalEntry], redactions: int, origin: str, status: str = "pending"
) -> Preview:
    """Record a proposal (pending, or already `declined`: the human said no in the approval
    dialog, so each candidate is recorded declined there) and return it with its one-time token
    and its targets: the drafted ones, unless the store changed since (`current`, under the lock)."""
    now = store.now()
    token = mint(store.workspace)
    record: dict[str, Any] = {
        "created": int(now),
        "expires": int(now) + TOKEN_TTL_SECONDS,
        "status": status,
        "origin": origin,
        "redactions": redactions,
        "candidates": [e.record() for e in entries],
    }
    if status == "declined":  # store.write.approvals: where each candidate was decided
        record["decided"] = {
            str(e.n): {"state": "declined", "where": "dialog", "at": int(now)} for e in entries
        }
    stamps = [e.judged for e in entries]
    if stamps and stamps[0] is not None and all(s == stamps[0] for s in stamps):
        record["judged"] = stamps[0]  # one view judged them all (draft)
    with transaction.write_lock(store, memories=False):
        pending = Pending.read(store.project.pending_path, store.key)
        pending.add(token, record)
        transaction.apply(store, [(store.project.pending_path, pending.render(now))])
        before = current(store, entries)
    return Preview(token, record["expires"], list(entries), redactions, pending.dropped, before)


def promote(store: Store, note_id: object, kind: str | None = None) -> Preview:
    """Propose a live note as durable memory (through the usual verdicts)."""
    wanted = check_id(note_id)
    note = store.view().notes.get(wanted)
    if note is None:
        raise NotFound(
            f"no live working note {wanted!r}: `engram status` counts notes; expired ones are gone"
        )
    chosen = kind or str(note.meta.get("kind") or "fact")
    if chosen not in DURABLE_TYPES:
        chosen = "fact"
    raw = [{"type": chosen, "title": note.title, "body": note.body, "tags": note.tags, "scope": note.scope}]
    entries, redactions = draft(store, raw, notes=[note.id])
    return store_proposal(store, entries, redactions, "promote")


def meta_for(candidate: Candidate, verdict: Verdict, scoped: Known, stamp: str) -> dict[str, Any]:
    """The front matter a verdict writes: a new memory's, or the UPDATE target's with the
    candidate's title, tags, paths, refs and dates (its id, type, roles and history kept, and
    `always` unless the candidate sets it)."""
    if verdict.kind == "UPDATE":
        target = scoped.in_scope(candidate.scope, verdict.id)
        assert target is not None
        meta = dict(target.meta)
        meta.update(title=candidate.title, updated=stamp)
        if candidate.tags:
            meta["tags"] = list(candidate.tags)
        if candidate.paths:
            meta["paths"] = list(candidate.paths)
        if candidate.always is not None:
            meta["always"] = candidate.always
        return with_code_meta(meta, candidate)  # store.propose.code_fields
    return with_code_meta(_new_meta(candidate, verdict, stamp), candidate)


def shown_fields(meta: dict[str, Any], scope: str) -> dict[str, Any]:
    """The fields of a memory file the human is shown and that route or rank it (SPEC §4.1)."""

    def strings(value: Any) -> list[str]:
        if isinstance(value, list):
            return [str(v) for v in value]
        return [value] if isinstance(value, str) and value else []

    return {
        "type": str(meta.get("type", "")),
        "title": str(meta.get("title", "")),
        "scope": scope,
        "tags": strings(meta.get("tags")),
        "paths": strings(meta.get("paths")),
        "always": meta.get("always") is True,
        "roles": strings(meta.get("roles")),
        **shown_code_fields(meta),  # store.propose.code_fields: only the ones the file holds
    }


def render_entry(n: int, meta: dict[str, Any], body: str, scope: str) -> bytes:
    """The file bytes, parsed back first: never a file engram would refuse to load."""
    try:
        return render_checked(meta, body, scope=scope, tier="durable")
    except CorruptMemory as exc:
        raise InvalidCandidate(f"candidate {n}: the memory file would not load back: {exc.message}") from None


def _new_meta(candidate: Candidate, verdict: Verdict, stamp: str) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "id": verdict.id,
        "type": candidate.type,
        "title": candidate.title,
        "scope": candidate.scope,
        "tags": list(candidate.tags),
    }
    if candidate.paths:
        meta["paths"] = list(candidate.paths)
    meta.update(
        always=candidate.always is True,
        status="active",
        supersedes=[verdict.target] if verdict.kind == "SUPERSEDE" else [],
        created=stamp,
        updated=stamp,
        source="save",
    )
    return meta
