"""The write path (SPEC §4): proposals, commits, direct application after a dialog.

Every write holds the workspace lock and goes through one journal, so a commit applies all
of its approved candidates or none of them. Before applying, each candidate's verdict is
recomputed against the store as it is now; a candidate whose verdict changed is deferred.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import journal
from store.approvals import TOKEN_TTL_SECONDS, Pending, mint
from store.errors import StoreError
from store.fsutil import workspace_lock
from store.memory import Memory, render_memory
from store.redact import redact
from store.verdicts import Candidate, Verdict, decide
from store.workspace import check_scope, ensure_gitignore, init_scope

if TYPE_CHECKING:
    from store.store import Store, View


class ReadOnly(StoreError):
    code = "ENGRAM_READ_ONLY"


class InvalidSelection(StoreError):
    code = "ENGRAM_VALIDATION"


def iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class Preview:
    """A stored proposal as the proposer sees it; `token` is shown once."""

    token: str
    expires: float
    candidates: list[dict[str, Any]]
    redactions: int
    dropped: int = 0
    """Older open proposals dropped to keep pending-approvals.json within its caps."""


@dataclass(slots=True)
class CommitReport:
    written: list[dict[str, Any]] = field(default_factory=list)
    deferred: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def write_lock(
    store: Store, scopes: Sequence[str] = ("project",), *, memories: bool = True
) -> Iterator[None]:
    """The workspace lock (and the user scope's when it is written), journal recovered; when the
    operation writes memories, a view that has re-stat'ed every file first."""
    if store.read_only:
        raise ReadOnly("this engram runs read-only (--read-only or ENGRAM_READ_ONLY=1); nothing was written")
    check_scope(store.project)  # a link leading outside is refused before any lock or write
    if "user" in scopes:
        check_scope(store.user)
    if not store.project.root.is_dir():
        init_scope(store.project)  # the first write creates .engram/ with its .gitignore
    with ExitStack() as stack:
        stack.enter_context(workspace_lock(store.project.lock_path))
        if "user" in scopes:
            stack.enter_context(workspace_lock(store.user.lock_path))
        ensure_gitignore(store.project)  # an existing one missing lines is completed
        store.recover_locked()
        if memories:
            store.view(sweep=True)  # take in every change made before the lock was ours
        yield


def make_candidates(raw: Sequence[dict[str, Any]]) -> tuple[list[Candidate], int]:
    """Candidates from tool/CLI input, secrets redacted; (candidates, redaction count)."""
    out: list[Candidate] = []
    total = 0
    for item in raw:
        title, n_title = redact(str(item["title"]))
        body, n_body = redact(str(item["body"]))
        total += n_title + n_body
        out.append(
            Candidate(
                type=item["type"],
                title=" ".join(title.split()) or "untitled",
                body=body.strip() + "\n",
                scope=item.get("scope", "project"),
                tags=tuple(dict.fromkeys(str(t).lower() for t in item.get("tags", ()))),
                paths=tuple(item.get("paths", ())),
                id=item.get("id"),
                supersedes=item.get("supersedes"),
            )
        )
    return out, total


def verdicts(store: Store, candidates: Sequence[Candidate], view: View | None = None) -> list[Verdict]:
    view = view or store.view()
    config = store.config()
    taken: set[str] = set()
    return [
        decide(
            c,
            view.durable,
            lambda text: store.similar_pool(text, view),
            taken,
            duplicate=config.dedup_duplicate,
            related=config.dedup_related,
        )
        for c in candidates
    ]


def _entry(n: int, c: Candidate, v: Verdict, note: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "n": n,
        "type": c.type,
        "title": c.title,
        "body": c.body,
        "scope": c.scope,
        "tags": list(c.tags),
        "paths": list(c.paths),
        "verdict": {"kind": v.kind, "id": v.id, "target": v.target, "target_hash": v.target_hash},
        "similar": [{"id": s.id, "title": s.title, "similarity": s.similarity} for s in v.similar],
    }
    if c.supersedes:
        entry["supersedes"] = c.supersedes
    if c.id:
        entry["requested_id"] = c.id
    if note:
        entry["note"] = note
    return entry


def draft(
    store: Store, raw: Sequence[dict[str, Any]], notes: Sequence[str | None] = ()
) -> tuple[list[dict[str, Any]], int]:
    """The numbered preview entries of a proposal, computed without writing anything."""
    candidates, redactions = make_candidates(raw)
    found = verdicts(store, candidates, store.view(recent_ok=True))
    notes = list(notes) or [None] * len(candidates)
    return [
        _entry(n, c, v, notes[n - 1]) for n, (c, v) in enumerate(zip(candidates, found, strict=True), 1)
    ], redactions


def store_proposal(
    store: Store, entries: list[dict[str, Any]], redactions: int, origin: str, status: str = "pending"
) -> Preview:
    """Record a proposal (pending, or already `declined`) and return it with its one-time token."""
    now = store.now()
    token = mint(store.workspace)
    record: dict[str, Any] = {
        "created": int(now),
        "expires": int(now) + TOKEN_TTL_SECONDS,
        "status": status,
        "origin": origin,
        "redactions": redactions,
        "candidates": entries,
    }
    with write_lock(store, memories=False):
        pending = Pending.read(store.project.pending_path, store.key)
        pending.add(token, record)
        store.apply([(store.project.pending_path, pending.render(now))])
    return Preview(token, record["expires"], entries, redactions, pending.dropped)


def selection(entries: Sequence[dict[str, Any]], approve: object) -> list[dict[str, Any]]:
    if approve == "all":
        return list(entries)
    numbers = approve if isinstance(approve, list) else None
    if not numbers or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise InvalidSelection('approve must be "all" or a non-empty list of candidate numbers')
    bad = sorted({n for n in numbers if not 1 <= n <= len(entries)})
    if bad:
        raise InvalidSelection(
            f"approve names {', '.join(map(str, bad))}, but this proposal has candidates 1 to {len(entries)}"
        )
    wanted = set(numbers)
    return [e for e in entries if e["n"] in wanted]


def commit(store: Store, token: str, approve: object) -> CommitReport:
    """Apply the approved candidates of a pending proposal; refusals write nothing."""
    scopes = ("project", "user")
    with write_lock(store, scopes):
        now = store.now()
        pending = Pending.read(store.project.pending_path, store.key)
        hashed, record = pending.check(token, store.workspace, now)
        chosen = selection(record["candidates"], approve)
        if record.get("origin") == "note":
            report, writes = _plan_note(store, chosen[0])
        else:
            report, writes = _plan(store, chosen, now)
        pending.set_status(hashed, "used")
        writes.append((store.project.pending_path, pending.render(now)))
        store.apply(writes)  # journal first: a kill at any instant is rolled forward and sealed
    return report


def apply_entries(store: Store, entries: Sequence[dict[str, Any]]) -> CommitReport:
    """Write candidates the human approved in a dialog (no token): the same path as commit."""
    with write_lock(store, ("project", "user")):
        report, writes = _plan(store, entries, store.now())
        if writes:
            store.apply(writes)
    return report


def _plan(
    store: Store, entries: Sequence[dict[str, Any]], now: float
) -> tuple[CommitReport, list[journal.Write]]:
    report = CommitReport()
    writes: list[journal.Write] = []
    candidates = [
        Candidate(
            type=e["type"],
            title=e["title"],
            body=e["body"],
            scope=e["scope"],
            tags=tuple(e["tags"]),
            paths=tuple(e.get("paths", ())),
            id=e.get("requested_id"),
            supersedes=e.get("supersedes"),
        )
        for e in entries
    ]
    view = store.view(recent_ok=True)  # the write lock's sweep just ran
    try:
        fresh = verdicts(store, candidates, view)
    except StoreError as exc:
        for e in entries:
            report.deferred.append(
                {"n": e["n"], "pinned": _line(e["verdict"]), "now": "invalid", "reason": exc.message}
            )
        return report, writes
    stamp = iso(now)
    for entry, candidate, now_verdict in zip(entries, candidates, fresh, strict=True):
        pinned = Verdict(**entry["verdict"])
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
        if pinned.kind in ("ADD", "SUPERSEDE"):
            meta = _new_meta(candidate, pinned, stamp)
            written = scope_dir.memory_dir / f"{pinned.id}.md"
            writes.append((written, render_memory(meta, candidate.body)))
        else:
            target = view.durable[pinned.id]
            meta = dict(target.meta)
            meta.update(title=candidate.title, updated=stamp)
            if candidate.tags:
                meta["tags"] = list(candidate.tags)
            written = _file_of(store, target)
            scope_dir = store.user if target.scope == "user" else store.project
            writes.append((written, render_memory(meta, candidate.body)))
        if pinned.kind == "SUPERSEDE":
            assert pinned.target is not None
            old = view.durable[pinned.target]
            old_meta = dict(old.meta)
            old_meta.update(status="superseded", superseded_by=pinned.id, updated=stamp)
            writes.append((_file_of(store, old), render_memory(old_meta, old.body)))
        if entry.get("note"):
            writes.append((store.project.working_dir / f"{entry['note']}.md", None))
        report.written.append(
            {"n": entry["n"], "id": pinned.id, "verdict": pinned.line(), "file": scope_dir.display(written)}
        )
    return report, writes


def _plan_note(store: Store, entry: dict[str, Any]) -> tuple[CommitReport, list[journal.Write]]:
    from store.notes import draft_from_record, note_write

    path, data, result = note_write(store, draft_from_record(entry["note_draft"]))
    written = {"n": entry["n"], "id": result["id"], "verdict": "NOTE", "file": result["file"]}
    return CommitReport(written=[written]), [(path, data)]


def note_entry(draft: Any) -> dict[str, Any]:
    """The single candidate of a note's token-path proposal."""
    return {
        "n": 1,
        "type": "note",
        "title": draft.title,
        "scope": draft.scope,
        "verdict": {"kind": "NOTE", "id": draft.id, "target": None, "target_hash": None},
        "similar": [],
        "note_draft": {
            "id": draft.id,
            "title": draft.title,
            "text": draft.text,
            "objective": draft.objective,
            "kind": draft.kind,
            "scope": draft.scope,
            "redactions": draft.redactions,
        },
    }


def _line(verdict: dict[str, Any]) -> str:
    return Verdict(**verdict).line()


def _deferred(entry: dict[str, Any], now_verdict: Verdict, reason: str) -> dict[str, Any]:
    return {"n": entry["n"], "pinned": _line(entry["verdict"]), "now": now_verdict.line(), "reason": reason}


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
        always=False,
        status="active",
        supersedes=[verdict.target] if verdict.kind == "SUPERSEDE" else [],
        created=stamp,
        updated=stamp,
        source="save",
    )
    return meta


def _file_of(store: Store, memory: Memory) -> Path:
    scope = store.user if memory.scope == "user" else store.project
    folder = scope.working_dir if memory.tier == "working" else scope.memory_dir
    return folder / f"{memory.id}.md"
