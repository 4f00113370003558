"""The write path (SPEC §4): proposals, commits, direct application after a dialog.

Every write holds the workspace lock and goes through one journal, so a commit applies all
of its approved candidates or none of them. Before applying, each candidate's verdict is
recomputed against the store as it is now; a candidate whose verdict changed is deferred.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from store import transaction
from store.approvals import TOKEN_TTL_SECONDS, Pending, mint
from store.errors import CorruptMemory, InvalidCandidate, InvalidSelection, StoreError
from store.ids import ID_RULE, check_id, is_valid_id
from store.invisible import describe, first_invisible
from store.memory import MAX_TITLE, Memory, iso, render_checked
from store.redact import MARK, redact, redact_all
from store.verdicts import Candidate, Known, Verdict, decide

if TYPE_CHECKING:
    from store.store import Store, View


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


def make_candidates(raw: Sequence[dict[str, Any]]) -> tuple[list[Candidate], int]:
    """Candidates from tool/CLI input with every field redacted; (candidates, redactions).

    Title, body, tags and paths are redacted (SPEC §4.1); a mined candidate brings the count
    of what mining already redacted (`redacted`). Ids must match in full before any path is
    built; a field engram would refuse to load back (a control character in the title, a title
    that redaction grew past the limit) is refused here, naming the candidate and field. So is
    a field holding characters the human cannot see (store/invisible.py): tag characters, bidi
    controls and other format characters are refused in title, body, tags and paths alike, so
    the preview, the pinned `fields` and the written file hold the same visible text.
    """
    out: list[Candidate] = []
    total = 0
    for n, item in enumerate(raw, 1):
        title, n_title = redact(str(item["title"]))
        body, n_body = redact(str(item["body"]))
        tags, n_tags = redact_all([str(t) for t in item.get("tags", ())])
        paths, n_paths = redact_all([str(p) for p in item.get("paths", ())])
        total += n_title + n_body + n_tags + n_paths + int(item.get("redacted", 0))
        title = " ".join(title.split()) or "untitled"
        _check_title(n, title, grew=n_title > 0)
        for name, values in (("tags", tags), ("paths", paths)):
            _check_single_lines(n, name, values)
        for name, values in (("title", [title]), ("body", [body]), ("tags", tags), ("paths", paths)):
            _check_visible(n, name, values)
        requested, supersedes = item.get("id"), item.get("supersedes")
        for name, value in (("id", requested), ("supersedes", supersedes)):
            if value is not None and not is_valid_id(value):
                raise InvalidCandidate(
                    f"candidate {n}: {name} {str(value)[:80]!r} is not a memory id: {ID_RULE}"
                )
        out.append(
            Candidate(
                type=item["type"],
                title=title,
                body=body.strip() + "\n",
                scope=item.get("scope", "project"),
                tags=tuple(dict.fromkeys(t.lower().replace(MARK.lower(), MARK) for t in tags)),
                paths=tuple(dict.fromkeys(paths)),
                id=requested,
                supersedes=supersedes,
            )
        )
    return out, total


def _check_title(n: int, title: str, *, grew: bool) -> None:
    if len(title) > MAX_TITLE:
        after = " after redaction" if grew else ""
        raise InvalidCandidate(
            f"candidate {n}: the title is {len(title)} characters{after}, more than {MAX_TITLE}: "
            "shorten it (move detail into the body)"
        )
    _check_single_lines(n, "title", [title])


_HIDDEN_ORDER: Final = frozenset(
    "\u2028\u2029\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Line separators and bidirectional controls: the dialog would show another text than the file holds."""


def _check_single_lines(n: int, name: str, values: Sequence[str]) -> None:
    """Title, tags and paths are single lines the human reads as written: no control characters
    (NUL included), no line separators, no bidirectional overrides."""
    for value in values:
        bad = next((ch for ch in value if unicodedata.category(ch) == "Cc" or ch in _HIDDEN_ORDER), None)
        if bad is not None:
            raise InvalidCandidate(
                f"candidate {n}: {name} {value[:60]!r} contains the control character U+{ord(bad):04X}: "
                "remove it"
            )


def _check_visible(n: int, name: str, values: Sequence[str]) -> None:
    """Refuse invisible characters in any written field (store/invisible.py says which)."""
    for value in values:
        bad = first_invisible(value)
        if bad is not None:
            raise InvalidCandidate(
                f"candidate {n}: {name} contains the invisible character {describe(bad)}, which the "
                "human would not see in the preview: remove it and propose again"
            )


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
    taken: set[str] = set()
    scoped = known(view)
    return [
        decide(
            c,
            scoped,
            lambda text: store.similar_pool(text, view),
            taken,
            duplicate=config.dedup_duplicate,
            related=config.dedup_related,
        )
        for c in candidates
    ]


def _entry(
    n: int, c: Candidate, v: Verdict, fields: dict[str, Any], note: str | None = None
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "n": n,
        "type": c.type,
        "title": c.title,
        "body": c.body,
        "scope": c.scope,
        "tags": list(c.tags),
        "paths": list(c.paths),
        "verdict": v.record(),
        "similar": [
            {"id": s.id, "title": s.title, "similarity": s.similarity, "scope": s.scope} for s in v.similar
        ],
        "fields": fields,
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
    view = store.view(recent_ok=True)
    found = verdicts(store, candidates, view)
    notes = list(notes) or [None] * len(candidates)
    entries = []
    for n, (c, v) in enumerate(zip(candidates, found, strict=True), 1):
        if v.kind == "NOOP":
            fields: dict[str, Any] = {}
        else:
            meta = _meta(c, v, known(view), "")
            _render(n, meta, c.body, c.scope)
            fields = shown_fields(meta, c.scope)
        entries.append(_entry(n, c, v, fields, notes[n - 1]))
    return entries, redactions


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
    with transaction.write_lock(store, memories=False):
        pending = Pending.read(store.project.pending_path, store.key)
        pending.add(token, record)
        transaction.apply(store, [(store.project.pending_path, pending.render(now))])
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
    with transaction.write_lock(store, scopes):
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
        transaction.apply(store, writes)  # journal first: a kill at any instant is rolled forward and sealed
    return report


def apply_entries(store: Store, entries: Sequence[dict[str, Any]]) -> CommitReport:
    """Write candidates the human approved in a dialog (no token): the same path as commit."""
    with transaction.write_lock(store, ("project", "user")):
        report, writes = _plan(store, entries, store.now())
        if writes:
            transaction.apply(store, writes)
    return report


def _plan(
    store: Store, entries: Sequence[dict[str, Any]], now: float
) -> tuple[CommitReport, list[transaction.Write]]:
    """The writes of approved entries, each re-checked against the store as it is now (in the
    candidate's own scope), rendered and parsed back; a changed verdict or a changed set of
    shown fields defers the candidate, a file engram could not load back refuses the commit."""
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
        fresh = verdicts(store, candidates, view)
    except StoreError as exc:
        for e in entries:
            report.deferred.append(
                {"n": e["n"], "pinned": _line(e["verdict"]), "now": "invalid", "reason": exc.message}
            )
        return report, writes
    scoped = known(view)
    stamp = iso(now)
    for entry, candidate, now_verdict in zip(entries, candidates, fresh, strict=True):
        pinned = Verdict.of(entry["verdict"])
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
        meta = _meta(candidate, pinned, scoped, stamp)
        if shown_fields(meta, candidate.scope) != entry.get("fields"):
            report.deferred.append(
                _deferred(
                    entry, now_verdict, "what would be written differs from what was shown; propose again"
                )
            )
            continue
        data = _render(entry["n"], meta, candidate.body, candidate.scope)
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
            writes.append((_file_of(store, old), _render(entry["n"], old_meta, old.body, old.scope)))
        if entry.get("note"):
            writes.append((store.project.working_dir / f"{check_id(entry['note'])}.md", None))
        report.written.append(
            {"n": entry["n"], "id": pinned.id, "verdict": pinned.line(), "file": scope_dir.display(written)}
        )
    return report, writes


def _candidate_of(entry: dict[str, Any]) -> Candidate:
    """A stored entry as a candidate again; its ids are checked in full before any path."""
    for key in ("requested_id", "supersedes"):
        if entry.get(key) is not None:
            check_id(entry[key])
    check_id(entry["verdict"].get("id"))
    return Candidate(
        type=entry["type"],
        title=entry["title"],
        body=entry["body"],
        scope=entry["scope"],
        tags=tuple(entry["tags"]),
        paths=tuple(entry.get("paths", ())),
        id=entry.get("requested_id"),
        supersedes=entry.get("supersedes"),
    )


def _meta(candidate: Candidate, verdict: Verdict, scoped: Known, stamp: str) -> dict[str, Any]:
    """The front matter a verdict writes: a new memory's, or the UPDATE target's with the
    candidate's title, tags and paths (its id, type, always, roles and history kept)."""
    if verdict.kind == "UPDATE":
        target = scoped.in_scope(candidate.scope, verdict.id)
        assert target is not None
        meta = dict(target.meta)
        meta.update(title=candidate.title, updated=stamp)
        if candidate.tags:
            meta["tags"] = list(candidate.tags)
        if candidate.paths:
            meta["paths"] = list(candidate.paths)
        return meta
    return _new_meta(candidate, verdict, stamp)


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
    }


def _render(n: int, meta: dict[str, Any], body: str, scope: str) -> bytes:
    """The file bytes, parsed back first: never a file engram would refuse to load."""
    try:
        return render_checked(meta, body, scope=scope, tier="durable")
    except CorruptMemory as exc:
        raise InvalidCandidate(f"candidate {n}: the memory file would not load back: {exc.message}") from None


def _plan_note(store: Store, entry: dict[str, Any]) -> tuple[CommitReport, list[transaction.Write]]:
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
    return Verdict.of(verdict).line()


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
