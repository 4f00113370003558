"""Commits (SPEC §4.2–4.3): the approved entries of a proposal written, all or nothing.

The rest, and why: docs/design.md, `store/write/commits.py`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from store.errors import InvalidCandidate, InvalidSelection, Next, StoreError, TokenRefused
from store.files.ids import check_id
from store.files.memory import Memory, iso
from store.propose.verdicts import Candidate, Verdict
from store.write import transaction
from store.write.approvals import AGAIN, Pending, states
from store.write.notes import note_write
from store.write.proposal_entry import ProposalEntry
from store.write.proposals import known, meta_for, render_entry, shown_fields, verdicts

if TYPE_CHECKING:
    from store.store import Store


@dataclass(slots=True)
class CommitReport:
    written: list[dict[str, Any]] = field(default_factory=list)
    deferred: list[dict[str, Any]] = field(default_factory=list)
    declined: list[int] = field(default_factory=list)
    """The candidates this call declined (`decide`, `decline`)."""
    pending: list[int] = field(default_factory=list)
    """The proposal's candidates still waiting after this call, by their numbers: a later call
    with the same token (or ref) decides them."""
    expires: float | None = None
    """When the proposal (and so `pending`) expires: 30 minutes after it was made."""


APPROVE: Final = Next("approve")
"""The argument naming the candidates to write: each surface names it (a tool argument, a flag)."""
APPROVE_FORMS: Final = Next("approve_forms")
"""What that argument takes, in each surface's words."""


def parse_approve(approve: object) -> object:
    """`"all"`, a list of numbers, or a string of comma-separated numbers ("1", "1, 3") as a
    list; anything else is returned as given, for `selection` to refuse."""
    if isinstance(approve, str) and approve.strip().lower() != "all":
        parts = [part.strip() for part in approve.split(",")]
        if parts and all(part.isascii() and part.isdigit() for part in parts):
            return [int(part) for part in parts]
    if isinstance(approve, str) and approve.strip().lower() == "all":
        return "all"
    return approve


def selection(
    entries: Sequence[ProposalEntry], approve: object, state: Mapping[int, str] | None = None
) -> list[ProposalEntry]:
    """The entries `approve` names: "all" (every one still pending) or their numbers, each a
    candidate of the proposal (`entries`: all of its candidates, or the part still waiting) and
    still pending by `state` (store.write.approvals.states; None: every entry is). InvalidSelection
    when a number is none of them, or was already decided: then nothing is chosen at all, so a
    request naming one decided candidate writes none of the others either (refusals write
    nothing; the message names the candidates still pending)."""
    state = state or {}
    waiting = [e for e in entries if state.get(e.n, "pending") == "pending"]
    approve = parse_approve(approve)
    if approve == "all":
        return waiting
    numbers = approve if isinstance(approve, list) else None
    if not numbers or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise InvalidSelection("", APPROVE_FORMS, f", not {str(approve)[:40]!r}")
    _check_numbers(entries, numbers, APPROVE, state)
    wanted = set(numbers)
    return [e for e in waiting if e.n in wanted]


_DONE: Final = {
    "written": "already saved",
    "declined": "already declined",
    "deferred": "already approved, but not saved (the store had changed since the proposal; propose it again)",
}


def _check_numbers(
    entries: Sequence[ProposalEntry], numbers: Collection[int], named: str | Next, state: Mapping[int, str]
) -> None:
    """InvalidSelection unless every number is a candidate of `entries` still pending by `state`."""
    offered = sorted(e.n for e in entries)
    bad = sorted({n for n in numbers if n not in offered})
    if bad:
        has = (
            f"candidates 1 to {len(offered)}"
            if offered == list(range(1, len(offered) + 1))
            else f"{'candidate' if len(offered) == 1 else 'candidates'} {', '.join(map(str, offered))} waiting"
        )
        raise InvalidSelection("", named, f" names {', '.join(map(str, bad))}, but this proposal has {has}")
    done = sorted({n for n in numbers if state.get(n, "pending") != "pending"})
    if done:
        left = [n for n in offered if state.get(n, "pending") == "pending"]
        said = "; ".join(
            f"{'candidate' if len(ns) == 1 else 'candidates'} {', '.join(map(str, ns))} "
            f"{'was' if len(ns) == 1 else 'were'} {_DONE[kind]}"
            for kind in ("written", "declined", "deferred")
            if (ns := [n for n in done if state[n] == kind])
        )
        rest = (
            f"still pending: {', '.join(map(str, left))}; nothing was decided by this request"
            if left
            else "none is still pending"
        )
        raise InvalidSelection(f"{said}; {rest}")


def commit(store: Store, token: str, approve: object, where: str = "agent") -> CommitReport:
    """Apply the approved candidates of a pending proposal (by its token); refusals write nothing.
    `where`: "agent" (the commit tool) or "cli" (`engram commit`), recorded with each decision."""
    with transaction.write_lock(store, ("project", "user")):
        now = store.now()
        pending = Pending.read(store.project.pending_path, store.key)
        hashed, record = pending.check(token, store.workspace, now)
        entries = [ProposalEntry.of(c) for c in record["candidates"]]
        chosen = selection(entries, approve, states(record))
        return _decided(store, pending, hashed, record, now, where, chosen)


def decide(
    store: Store,
    ref: str,
    *,
    approve: Collection[int] = (),
    decline: Collection[int] = (),
    where: str,
) -> CommitReport:
    """The human's decisions on a waiting proposal named by its ref (its token's hash, or 12 or
    more of its first hex digits, as `engram pending` lists it) or its token: `approve` written
    through the commit path, `decline` declined, the rest left pending. For the human's own
    surfaces only (`where`: "cli", the terminal walk; "ui", engram ui). Naming a candidate
    already decided, or one in both lists, refuses the whole call (InvalidSelection); a proposal
    no longer waiting is TokenRefused, as a commit by token."""
    with transaction.write_lock(store, ("project", "user")):
        now = store.now()
        pending = Pending.read(store.project.pending_path, store.key)
        if ref.startswith("engram-"):
            hashed, record = pending.check(ref, store.workspace, now)
        else:
            hashed, record = pending.named(ref, now)
        entries = [ProposalEntry.of(c) for c in record["candidates"]]
        state = states(record)
        chosen = selection(entries, list(approve), state) if approve else []
        if decline:
            _check_numbers(entries, decline, "the list of candidates to decline", state)
        both = sorted({e.n for e in chosen} & set(decline))
        if both:
            raise InvalidSelection(
                f"{'candidate' if len(both) == 1 else 'candidates'} {', '.join(map(str, both))} "
                "cannot be both approved and declined; choose one"
            )
        if not chosen and not decline:
            raise InvalidSelection("name the candidates to approve or to decline; nothing was decided")
        return _decided(store, pending, hashed, record, now, where, chosen, decline)


def decline(store: Store, ref: str, numbers: Collection[int], where: str) -> CommitReport:
    """Decline candidates of a waiting proposal (by its token or ref) without writing any memory;
    the rest stay pending. The proposal is declined once every candidate is (its token then fails
    with ENGRAM_DECLINED, naming where), used once none is pending and one was approved. Not on
    the MCP surface: see the module docstring."""
    return decide(store, ref, decline=numbers, where=where)


def _decided(
    store: Store,
    pending: Pending,
    hashed: str,
    record: dict[str, Any],
    now: float,
    where: str,
    chosen: Sequence[ProposalEntry],
    decline: Collection[int] = (),
) -> CommitReport:
    """Write the chosen candidates, record every decision of this call (the declined ones too),
    and apply both in one journal; the caller holds the write lock and checked the numbers."""
    if not chosen and not decline:
        raise TokenRefused(
            "ENGRAM_TOKEN_USED", "every candidate of this proposal was already decided; ", AGAIN
        )
    writes: list[transaction.Write]
    if not chosen:
        report, writes = CommitReport(), []
    elif record.get("origin") == "note":
        report, writes = _plan_note(store, chosen[0])
    else:
        report, writes = _plan(store, chosen, now, judged=record.get("judged"))
    decisions = {w["n"]: "written" for w in report.written}
    decisions |= {d["n"]: "deferred" for d in report.deferred}
    decisions |= {n: "declined" for n in decline}
    pending.decide(hashed, decisions, where, now)
    report.declined = sorted(set(decline))
    report.pending = [n for n, s in sorted(states(pending.records[hashed]).items()) if s == "pending"]
    if isinstance(expires := record.get("expires"), int | float) and not isinstance(expires, bool):
        report.expires = float(expires)
    writes.append((store.project.pending_path, pending.render(now)))
    transaction.apply(store, writes)  # journal first: a kill at any instant is rolled forward and sealed
    return report


def apply_entries(store: Store, entries: Sequence[ProposalEntry]) -> CommitReport:
    """Write candidates the human approved in a dialog (no token): the same path as commit."""
    with transaction.write_lock(store, ("project", "user")):
        report, writes = _plan(store, entries, store.now())
        if writes:
            transaction.apply(store, writes)
    return report


def _plan(
    store: Store, entries: Sequence[ProposalEntry], now: float, *, judged: object = None
) -> tuple[CommitReport, list[transaction.Write]]:
    """The writes of approved entries, each re-checked against the store as it is now (in the
    candidate's own scope), rendered and parsed back; a changed verdict or a changed set of
    shown fields defers the candidate, a file engram could not load back refuses the commit.
    `judged`: the stamp of the view the proposal's verdicts came from (transaction.view_stamp);
    while the view still has it, those verdicts are the ones judging again would give."""
    report = CommitReport()
    writes: list[transaction.Write] = []
    try:
        candidates = [_candidate_of(e) for e in entries]
    except StoreError as exc:
        raise InvalidCandidate(
            f"the proposal holds an invalid candidate ({exc.message}); propose again"
        ) from None
    view = store.view(recent_ok=True)  # the write lock's sweep just ran
    try:
        if judged is not None and judged == transaction.view_stamp(store, view):
            fresh: list[Verdict] = [e.verdict for e in entries]  # nothing changed since the proposal
        else:
            fresh = verdicts(store, candidates, view)
    except StoreError as exc:
        for e in entries:
            report.deferred.append(
                {"n": e.n, "pinned": e.verdict.line(), "now": "invalid", "reason": exc.message}
            )
        return report, writes
    scoped = known(view)
    stamp = iso(now)
    for entry, candidate, now_verdict in zip(entries, candidates, fresh, strict=True):
        pinned = entry.verdict
        if pinned.kind == "NOOP":
            report.deferred.append(_deferred(entry, now_verdict, "already known: nothing to write"))
            continue
        if not pinned.same_as(now_verdict):
            report.deferred.append(
                _deferred(entry, now_verdict, "the store changed since the proposal; propose again")
            )
            continue
        scope_dir = store.user if candidate.scope == "user" else store.project
        if pinned.kind in ("ADD", "SUPERSEDE") and (scope_dir.memory_dir / f"{pinned.id}.md").exists():
            report.deferred.append(
                _deferred(entry, now_verdict, f"a file {pinned.id}.md appeared meanwhile; propose again")
            )
            continue
        meta = meta_for(candidate, pinned, scoped, stamp)
        if shown_fields(meta, candidate.scope) != entry.fields:
            report.deferred.append(
                _deferred(
                    entry, now_verdict, "what would be written differs from what was shown; propose again"
                )
            )
            continue
        data = render_entry(entry.n, meta, candidate.body, candidate.scope)
        if pinned.kind in ("ADD", "SUPERSEDE"):
            written = scope_dir.memory_dir / f"{pinned.id}.md"
        else:
            target = scoped.in_scope(candidate.scope, pinned.id)
            assert target is not None  # the re-check found it, in this scope
            written = _file_of(store, target)
        writes.append((written, data))
        if pinned.kind == "SUPERSEDE":
            assert pinned.target is not None
            old = scoped.in_scope(candidate.scope, pinned.target)
            assert old is not None
            old_meta = dict(old.meta)
            old_meta.update(status="superseded", superseded_by=pinned.id, updated=stamp)
            writes.append((_file_of(store, old), render_entry(entry.n, old_meta, old.body, old.scope)))
        if entry.note:
            writes.append((store.project.working_dir / f"{check_id(entry.note)}.md", None))
        report.written.append(
            {"n": entry.n, "id": pinned.id, "verdict": pinned.line(), "file": scope_dir.display(written)}
        )
    return report, writes


def _candidate_of(entry: ProposalEntry) -> Candidate:
    """A stored entry as a candidate again; its ids are checked in full before any path."""
    for wanted in (entry.requested_id, entry.supersedes):
        if wanted is not None:
            check_id(wanted)
    check_id(entry.verdict.id)
    return Candidate(
        type=entry.type,
        title=entry.title,
        body=entry.body,
        scope=entry.scope,
        tags=entry.tags,
        paths=entry.paths,
        id=entry.requested_id,
        supersedes=entry.supersedes,
        always=entry.always,
        refs=entry.refs,
        valid_until=entry.valid_until,
        review_after=entry.review_after,
    )


def _plan_note(store: Store, entry: ProposalEntry) -> tuple[CommitReport, list[transaction.Write]]:
    assert entry.note_draft is not None  # a note's proposal holds its draft
    check_id(entry.note_draft.id)
    path, data, result = note_write(store, entry.note_draft)
    written = {"n": entry.n, "id": result["id"], "verdict": "NOTE", "file": result["file"]}
    return CommitReport(written=[written]), [(path, data)]


def _deferred(entry: ProposalEntry, now_verdict: Verdict, reason: str) -> dict[str, Any]:
    return {"n": entry.n, "pinned": entry.verdict.line(), "now": now_verdict.line(), "reason": reason}


def _file_of(store: Store, memory: Memory) -> Path:
    scope = store.user if memory.scope == "user" else store.project
    folder = scope.working_dir if memory.tier == "working" else scope.memory_dir
    return folder / f"{memory.id}.md"
