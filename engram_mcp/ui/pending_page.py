"""`/pending`: every proposal waiting for approval, each candidate in full, and a form per
proposal to save or decline the checked ones (issue 23, Build 2).

A candidate is shown as the preview and the dialog show it (engram_mcp.ops.shown, .changes):
verdict, type, title, the body (rendered safely, or as text), tags, paths, refs, dates,
`always`, scope, the proposal's redaction count, and for an UPDATE or SUPERSEDE what it changes
in the memory it names, with the `!` marks when it drops text or tags or mutes the memory.
The proposals are read as `engram pending` reads them (store.write.curate.pending, whose `ref`
names a proposal on the page: the token itself is never stored, so the page never has one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup
from werkzeug.wrappers import Request, Response

from engram_mcp.ops.changes import Change, full_diff, marks, summary
from engram_mcp.ops.shown import shown
from engram_mcp.ui.render import markdown
from engram_mcp.ui.webapp import Page
from store.store import Store
from store.write import curate, proposals
from store.write.approvals import Pending
from store.write.proposal_entry import ProposalEntry


@dataclass(frozen=True, slots=True)
class Candidate:
    entry: ProposalEntry
    fields: dict[str, Any]
    body: str
    rendered: Markup
    change: Change | None
    marks: list[str]
    summary: list[str]
    diff: list[str]


@dataclass(frozen=True, slots=True)
class Waiting:
    proposal: curate.Proposal
    redactions: int
    candidates: list[Candidate]


def waiting(store: Store) -> list[Waiting]:
    """The proposals `engram pending` lists, oldest first, each candidate in full."""
    listed = {p.ref: p for p in curate.pending(store)}
    found = []
    for hashed, record in Pending.read(store.project.pending_path, store.key).open(store.now()):
        proposal = listed.get(hashed[:12])
        if proposal is None:  # closed between the two reads
            continue
        entries = [ProposalEntry.of(c) for c in record.get("candidates", []) if isinstance(c, dict)]
        redactions = record.get("redactions")
        count = redactions if isinstance(redactions, int) and not isinstance(redactions, bool) else 0
        view = shown(entries, count, proposals.current(store, entries))
        candidates = []
        for entry in entries:
            body = entry.note_draft.text if entry.note_draft is not None else entry.body
            change = view.changes.get(entry.n)
            candidates.append(
                Candidate(
                    entry,
                    dict(view.fields[entry.n]),
                    body,
                    markdown(body),
                    change,
                    marks(change) if change is not None else [],
                    summary(change) if change is not None else [],
                    list(full_diff(change)) if change is not None else [],
                )
            )
        found.append(Waiting(proposal, count, candidates))
    return found


def pending(page: Page, request: Request) -> Response:
    return page.render(
        "pending.html",
        proposals=waiting(page.store),
        raw=request.args.get("as") == "text",
        approvals=page.approvals,
    )


def decide(page: Page, request: Request, ref: str) -> Response:
    return page.problem(
        501, "ENGRAM_UI_NOT_YET", "approving on this page is not built yet; use `engram commit`"
    )
