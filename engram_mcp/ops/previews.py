"""How a proposal and a commit are shown: the preview text and rows, the token outcome, the
commit report. Shared by the tools and the CLI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from engram_mcp.ops.changes import (
    Change,
    changed_lines,
    full_diff,
    marks,
    quoted,
    short_diff,
    summary,
    within,
)
from engram_mcp.ops.shown import Shown, code_line, code_row, shown
from engram_mcp.ops.wording import tool_wording
from engram_mcp.outcome import Hint, Outcome, Wording
from store.files.memory import iso
from store.safety import untrusted
from store.write.approvals import MAX_PROPOSALS
from store.write.commits import CommitReport
from store.write.proposal_entry import Before, ProposalEntry
from store.write.proposals import Preview


def token_hints(preview: Preview) -> tuple[Hint, Hint]:
    """A stored proposal's next steps: its token, and committing it once the human approves."""
    token = (("token", preview.token), ("expires", iso(preview.expires)))
    return Hint("token", token), Hint("commit", token[:1])


SUPERSEDE_DIFF: Final = 4_000
"""Characters of a SUPERSEDE's diff against the memory it retires, in the preview (its new
body is shown whole above it)."""


def _change_row(c: Change) -> dict[str, Any]:
    return {
        "target": c.target,
        "title_changed": c.title is not None,
        "body_changed": c.body_changed,
        "dropped_lines": c.dropped_lines,
        "dropped_tags": [untrusted.line(t, 60) for t in c.tags[0]],
        "dropped_paths": [untrusted.line(p, 60) for p in c.paths[0]],
        "dropped_refs": [untrusted.line(r, 300) for r in c.refs[0]],
        "unresolved_refs": [untrusted.line(r, 300) for r in c.unresolved],
        **{name: [untrusted.line(old, 40), untrusted.line(new, 40)] for name, old, new in c.values},
        "changed_since_proposed": c.changed,
    }


def preview_rows(
    entries: Sequence[ProposalEntry], before: Mapping[int, Before] | None = None
) -> list[dict[str, Any]]:
    """The preview's rows (`data.candidates`), an UPDATE's and SUPERSEDE's with their `changes`
    when `before` is given (store.proposals.targets)."""
    return rows(shown(entries, 0, before))


def rows(view: Shown) -> list[dict[str, Any]]:
    out = []
    for e in view.entries:
        verdict = e.verdict
        fields = view.fields[e.n]
        row: dict[str, Any] = {
            "n": e.n,
            "verdict": verdict.line(),
            "target_id": verdict.target,
            "id": verdict.id,
            "type": fields["type"],
            "title": fields["title"],
            "scope": fields["scope"],
            "tags": fields["tags"],
            "paths": fields["paths"],
            "always": fields["always"],
            "roles": fields["roles"],
            "similar": e.similar_rows(),
        }
        row.update(code_row(fields))
        if verdict.shadows:
            row["shadows"] = verdict.shadows
        if e.n in view.changes:
            row["changes"] = _change_row(view.changes[e.n])
        out.append(row)
    return out


def _listed(values: Sequence[str]) -> str:
    return ", ".join(values) if values else "none"


def preview_text(
    entries: Sequence[ProposalEntry], redactions: int, before: Mapping[int, Before] | None = None
) -> str:
    """The numbered preview; an UPDATE shows its body as a diff against the memory it rewrites
    and a SUPERSEDE its diff against the one it retires, each marked when it drops text or
    tags (`before`: store.proposals.targets)."""
    return text(shown(entries, redactions, before))


def text(view: Shown) -> str:
    changes = view.changes
    lines = [
        f"Proposal: {len(view.entries)} candidate(s), {view.redactions} redaction(s). Nothing is saved yet.",
        "",
    ]
    for e in view.entries:
        verdict = e.verdict
        draft = e.note_draft
        shadows = f" (shadows {verdict.shadows} in this workspace)" if verdict.shadows else ""
        lines.append(f"{e.n}. Verdict: {verdict.line()}{shadows}")
        c = changes.get(e.n)
        if c is not None:
            lines.extend("   " + mark for mark in marks(c))
        if draft is not None:
            lines.append(f"   [note] {draft.title} → {draft.id} ({draft.scope})")
            if draft.objective:
                lines.append(f"   objective: {draft.objective}")
        else:
            f = view.fields[e.n]
            lines.append(f"   [{f['type']}] {f['title']} → {verdict.id} ({f['scope']})")
            lines.append(
                f"   tags: {_listed(f['tags'])} · paths: {_listed(f['paths'])} · "
                f"always: {'yes' if f['always'] else 'no'} · roles: {_listed(f['roles']) if f['roles'] else 'all'}"
            )
            if (code := code_line(f)) is not None:
                lines.append(code)
        if e.similar:
            near = ", ".join(
                f"{'user:' if s.scope == 'user' else ''}{s.id} ({s.similarity:.2f})" for s in e.similar
            )
            lines.append(f"   Closest: {near}")
        if c is not None:
            lines.extend("   " + line for line in summary(c))
        body = e.body or (draft.text if draft is not None else "")
        if c is not None and c.kind == "UPDATE" and c.body_changed:
            lines.extend("   " + line for line in full_diff(c))
        else:
            lines.extend("   | " + line for line in (quoted(body.rstrip("\n")) if body.strip() else ()))
            if c is not None and c.kind == "SUPERSEDE":
                lines += _bounded_diff(c, SUPERSEDE_DIFF)
        lines.append("")
    return "\n".join(lines)


def _bounded_diff(c: Change, budget: int) -> list[str]:
    diff = ["   " + line for line in short_diff(c)]
    return within(diff, budget, lambda i: f"   … ({changed_lines(diff[i:])} more changed line(s))")


def token_outcome(preview: Preview, prefix: str = "", hint: Wording = tool_wording) -> Outcome:
    """The preview of a stored proposal with its token, and how to commit it (`token_hints`)
    in the words of `hint` (the tools name engram_commit, the CLI `engram commit TOKEN`)."""
    hints = token_hints(preview)
    view = shown(preview.candidates, preview.redactions, preview.before)
    data = {
        "approval_token": preview.token,
        "expires_at": iso(preview.expires),
        "candidates": rows(view),
        "redactions": preview.redactions,
    }
    shown_text = prefix + text(view) + "\n".join(hint(h) for h in hints)
    if preview.dropped:
        shown_text += (
            f"\n{preview.dropped} older pending proposal(s) were dropped to keep the pending file within "
            f"its cap ({MAX_PROPOSALS} proposals); their tokens no longer work."
        )
    return Outcome(True, shown_text, data, hints=hints)


def report_outcome(report: CommitReport, extra: dict[str, Any] | None = None) -> Outcome:
    lines = [f"Written: {len(report.written)}; deferred: {len(report.deferred)}."]
    lines += [f"{w['n']}. {w['verdict']} → {w['id']} ({w['file']})" for w in report.written]
    lines += [
        f"{d['n']}. deferred: was {d['pinned']}, now {d['now']}: {d['reason']}" for d in report.deferred
    ]
    return Outcome(
        True, "\n".join(lines), {"written": report.written, "deferred": report.deferred, **(extra or {})}
    )
