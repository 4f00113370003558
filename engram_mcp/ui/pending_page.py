"""`/pending`: every proposal waiting for approval, each candidate in full, and a form per
proposal to save or decline the checked ones.

A candidate is shown as the preview and the dialog show it (engram_mcp.ops.shown, .changes):
verdict, type, title, the body (rendered safely, or as text), tags, paths, refs, dates,
`always`, scope, the proposal's redaction count, and for an UPDATE or SUPERSEDE what it changes
in the memory it names, with the `!` marks when it drops text or tags or mutes the memory.
The proposals are read as `engram pending` reads them (store.write.curate.pending, whose `ref`
names a proposal on the page: the token itself is never stored, so the page never has one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from markupsafe import Markup
from werkzeug.wrappers import Request, Response

from engram_mcp.ops.changes import Change, full_diff, marks, summary
from engram_mcp.ops.previews import report_outcome
from engram_mcp.ops.shown import shown
from engram_mcp.ops.wording import cli_wording
from engram_mcp.ui.render import hides_text, markdown
from engram_mcp.ui.webapp import Page
from store.errors import StoreError
from store.store import Store
from store.write import commits, curate, proposals
from store.write.approvals import Pending
from store.write.proposal_entry import ProposalEntry


@dataclass(frozen=True, slots=True)
class Candidate:
    entry: ProposalEntry
    fields: dict[str, Any]
    body: str
    rendered: Markup
    hides: bool
    """The rendered body leaves out text the file holds (render.hides_text): the page says so."""
    change: Change | None
    marks: list[str]
    summary: list[str]
    diff: list[str]


@dataclass(frozen=True, slots=True)
class Waiting:
    proposal: curate.Proposal
    redactions: int
    candidates: list[Candidate]


def waiting(store: Store, *, rendered: bool = False) -> list[Waiting]:
    """The proposals `engram pending` lists, oldest first, each candidate in full (its body
    rendered as markdown only when `rendered`)."""
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
            html = markdown(body) if rendered else Markup()
            candidates.append(
                Candidate(
                    entry,
                    dict(view.fields[entry.n]),
                    body,
                    html,
                    rendered and hides_text(body, html),
                    change,
                    marks(change) if change is not None else [],
                    summary(change) if change is not None else [],
                    list(full_diff(change)) if change is not None else [],
                )
            )
        found.append(Waiting(proposal, count, candidates))
    return found


def pending(page: Page, request: Request) -> Response:
    """Bodies as text by default: what is saved, every character of it (a rendered view drops link
    definitions, image tags and titles); `?as=rendered` renders them."""
    rendered = request.args.get("as") == "rendered"
    return page.render(
        "pending.html",
        proposals=waiting(page.store, rendered=rendered),
        raw=not rendered,
        approvals=page.approvals,
    )


ACTIONS: Final = ("save", "decline")
MAX_CANDIDATE: Final = 10_000
_REF: Final = re.compile(r"[0-9a-f]{12}")


def decide(page: Page, request: Request, ref: str) -> Response:
    """Save or decline the ticked candidates of the proposal `ref` names, through the commit path
    (store.write.commits.decide: verdicts re-checked, deferrals reported), recorded as decided
    in engram ui; the unticked ones stay pending."""
    if _REF.fullmatch(ref) is None:
        return page.problem(404, "ENGRAM_NOT_FOUND", "no such proposal: the pending page lists them")
    action = request.form.get("action", "")
    if action not in ACTIONS:
        return page.problem(400, "ENGRAM_VALIDATION", "use the page's own Save or Decline button")
    if action == "save" and page.approvals is not None:
        return page.problem(403, "ENGRAM_AGENT_SHELL", page.approvals)
    ticked = request.form.getlist("candidate")
    if not ticked:
        return page.problem(
            400,
            "ENGRAM_VALIDATION",
            "no candidate was ticked, so nothing was decided: tick the ones to " + action,
        )
    if not all(n.isascii() and n.isdigit() and len(n) <= 5 and 0 < int(n) <= MAX_CANDIDATE for n in ticked):
        return page.problem(400, "ENGRAM_VALIDATION", "a ticked candidate is not a candidate number")
    numbers = sorted({int(n) for n in ticked})
    if (
        action == "save"
        and (refused := page.unapproved(request, f"save {_numbered(numbers)} of proposal {ref}")) is not None
    ):
        return refused
    try:
        if action == "save":
            report = commits.decide(page.store, ref, approve=numbers, where="ui")
        else:
            report = commits.decide(page.store, ref, decline=numbers, where="ui")
    except StoreError as exc:
        return page.problem(409, exc.code, exc.text(cli_wording))
    said = report_outcome(replace(report, declined=[], pending=[]), words=cli_wording).text
    lines = [said] if report.written or report.deferred else []
    if report.declined:
        lines.append(
            f"Declined {_numbered(report.declined)}: nothing of {'it' if len(report.declined) == 1 else 'them'} was saved."
        )
    if report.pending:
        lines.append(
            f"Still pending: {_numbered(report.pending)}, on this page until saved, declined or the "
            "proposal expires."
        )
    return page.render(
        "done.html", text="\n".join(lines), back="/pending", back_text="Back to the pending proposals"
    )


def _numbered(numbers: Sequence[int]) -> str:
    return f"{'candidate' if len(numbers) == 1 else 'candidates'} {', '.join(map(str, numbers))}"
