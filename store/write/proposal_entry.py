"""One numbered candidate of a proposal: what the human is shown, what `pending-approvals.json`
keeps under the proposal's integrity tag, and what a commit re-checks and writes.

The record is the same for the store (store.proposals, store.write.commits), the tools and the CLI
(engram_mcp.ops); only `record` and `of` know its stored form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from store.propose.code_fields import code_values
from store.propose.verdicts import Similar, Verdict
from store.write.notes import NoteDraft


@dataclass(frozen=True, slots=True)
class Before:
    """The memory an UPDATE rewrites or a SUPERSEDE retires, as the store holds it now: what
    the preview and the dialog diff the candidate against (SPEC §4.1, §4.3). Its text came
    from a memory file, so it is untrusted."""

    id: str
    title: str
    body: str
    tags: tuple[str, ...]
    paths: tuple[str, ...]
    changed: bool
    """Its file is no longer the one the verdict was pinned to: the commit will defer it."""
    refs: tuple[str, ...] = ()
    valid_until: str = ""
    review_after: str = ""
    always: bool = False
    unresolved: tuple[str, ...] = ()
    """The candidate's refs that do not resolve in the working tree now (store.code.staleness):
    written, they mark the memory stale."""
    seen: tuple[Any, ...] = ()
    """The key of the store's view it was read in (store.Store.view): while the store's view
    has that key, it is still what the store holds."""


@dataclass(frozen=True, slots=True)
class ProposalEntry:
    n: int
    """Its 1-based number in the proposal: what `approve` names."""
    type: str
    title: str
    scope: str
    verdict: Verdict
    """The verdict pinned when it was proposed (its stored form: no `similar`)."""
    similar: tuple[Similar, ...] = ()
    """The closest memories, shown next to it."""
    body: str = ""
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    fields: Mapping[str, Any] | None = None
    """The shown fields of the file it writes (store.proposals.shown_fields): what the commit
    re-checks. Empty for a NOOP (it writes nothing), None for a note."""
    refs: tuple[str, ...] = ()
    """Code references (store.code.refs): given, or extracted from title and body at proposal time."""
    valid_until: str = ""
    review_after: str = ""
    """Valid time (store.code.validity): dates written YYYY-MM-DD, or empty."""
    supersedes: str | None = None
    requested_id: str | None = None
    always: bool | None = None
    """`always` as given; None keeps an UPDATE target's setting (a new memory gets false)."""
    note: str | None = None
    """The working note a promotion removes once the memory is written."""
    note_draft: NoteDraft | None = None
    """A note's single entry (token path): the note to write."""
    before: Before | None = field(default=None, compare=False, repr=False)
    """The memory an UPDATE or SUPERSEDE changes, as the draft read it (store.proposals.draft):
    shown, never stored (`record` leaves it out; the commit reads the memory again)."""
    judged: list[Any] | None = field(default=None, compare=False, repr=False)
    """The stamp of the view its verdict was judged in (store.write.transaction.view_stamp):
    stored once per proposal, as the record's `judged`, so a commit in the same view takes the
    verdicts instead of judging again (store.write.commits)."""

    def similar_rows(self) -> list[dict[str, Any]]:
        return [
            {"id": s.id, "title": s.title, "similarity": s.similarity, "scope": s.scope} for s in self.similar
        ]

    def record(self) -> dict[str, Any]:
        """The stored form (JSON), as the integrity tag covers it."""
        entry: dict[str, Any] = {"n": self.n, "type": self.type, "title": self.title}
        if self.note_draft is None:
            entry.update(body=self.body, scope=self.scope, tags=list(self.tags), paths=list(self.paths))
        else:
            entry["scope"] = self.scope
        entry.update(verdict=self.verdict.record(), similar=self.similar_rows())
        if self.fields is not None:
            entry["fields"] = dict(self.fields)
        entry.update(code_values(self.refs, self.valid_until, self.review_after))  # store.propose.code_fields
        if self.note_draft is not None:
            entry["note_draft"] = _draft_record(self.note_draft)
        if self.supersedes:
            entry["supersedes"] = self.supersedes
        if self.requested_id:
            entry["requested_id"] = self.requested_id
        if self.always is not None:
            entry["always"] = self.always
        if self.note:
            entry["note"] = self.note
        return entry

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> ProposalEntry:
        """An entry from its stored form (ids are checked by the commit, before any path)."""
        draft = record.get("note_draft")
        fields = record.get("fields")
        return cls(
            n=record["n"],
            type=record["type"],
            title=record["title"],
            scope=record.get("scope", "project"),
            verdict=Verdict.of(record["verdict"]),
            similar=tuple(
                Similar(s["id"], s["title"], s["similarity"], s.get("scope", "project"))
                for s in record.get("similar", ())
            ),
            body=record.get("body", ""),
            tags=tuple(record.get("tags", ())),
            paths=tuple(record.get("paths", ())),
            fields=dict(fields) if isinstance(fields, dict) else None,
            refs=tuple(str(r) for r in record.get("refs", ())),
            valid_until=str(record.get("valid_until", "")),
            review_after=str(record.get("review_after", "")),
            supersedes=record.get("supersedes"),
            requested_id=record.get("requested_id"),
            always=record["always"] if isinstance(record.get("always"), bool) else None,
            note=record.get("note"),
            note_draft=_draft_of(draft) if isinstance(draft, dict) else None,
        )


def note_entry(draft: NoteDraft) -> ProposalEntry:
    """The single candidate of a note's token-path proposal."""
    return ProposalEntry(
        n=1,
        type="note",
        title=draft.title,
        scope=draft.scope,
        verdict=Verdict("NOTE", draft.id),
        note_draft=draft,
    )


def _draft_record(draft: NoteDraft) -> dict[str, Any]:
    return {
        "id": draft.id,
        "title": draft.title,
        "text": draft.text,
        "objective": draft.objective,
        "kind": draft.kind,
        "scope": draft.scope,
        "redactions": draft.redactions,
    }


def _draft_of(draft: Mapping[str, Any]) -> NoteDraft:
    return NoteDraft(
        id=draft["id"],
        title=draft["title"],
        text=draft["text"],
        objective=draft["objective"],
        kind=draft.get("kind"),
        scope=draft.get("scope", "project"),
        redactions=draft.get("redactions", 0),
    )
