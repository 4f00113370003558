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
from engram_mcp.ops.outcome import Outcome
from engram_mcp.ops.shown import Shown, code_line, code_row, shown
from engram_mcp.ops.wording import tool_wording
from store.errors import Next, Words
from store.files.memory import iso
from store.plurals import count
from store.safety import untrusted
from store.write.approvals import MAX_PROPOSALS
from store.write.commits import CommitReport
from store.write.proposal_entry import Before, ProposalEntry
from store.write.proposals import Preview


def token_hints(preview: Preview) -> tuple[Next, Next]:
    """A stored proposal's next steps: its token, and committing it once the human approves."""
    token = (("token", preview.token), ("expires", iso(preview.expires)))
    return Next("token", token), Next("commit", token[:1])


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
        f"Proposal: {count(len(view.entries), 'candidate')}, {count(view.redactions, 'redaction')}. "
        "Nothing is saved yet.",
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
    return within(diff, budget, lambda i: f"   … ({count(changed_lines(diff[i:]), 'more changed line')})")


def token_outcome(preview: Preview, prefix: str = "", hint: Words = tool_wording) -> Outcome:
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
            f"\n{count(preview.dropped, 'older pending proposal')} "
            f"{'was' if preview.dropped == 1 else 'were'} dropped to keep the pending file within "
            f"its cap ({MAX_PROPOSALS} proposals); {'its token' if preview.dropped == 1 else 'their tokens'} "
            "no longer work" + ("s." if preview.dropped == 1 else ".")
        )
    return Outcome(True, shown_text, data, hints=hints)


NOOP_LINE: Final = "NOOP duplicate of "
"""How store.propose.verdicts.Verdict.line starts a duplicate's verdict."""


STORE_CHANGED: Final = "the store changed since the proposal"
"""store.write.commits' reason when a candidate's verdict or its target's content changed."""


def report_outcome(
    report: CommitReport, extra: dict[str, Any] | None = None, words: Words = tool_wording
) -> Outcome:
    """What a commit wrote and what it did not, in plain words ("Written: 1; deferred:
    0." on every add, and a duplicate read "deferred: was NOOP duplicate of X, now NOOP duplicate
    of X: already known: nothing to write"). A candidate the store now holds word for word (a
    `save-session --force` wrote it meanwhile) is "already saved as X", not "propose again"; one
    the store changed under is not saved, with the way to propose it afresh in `words`.
    `data` keeps `written` and `deferred` (each deferred row gains `saved_as`: the id that holds
    it, or None) and, when there are any, `declined_candidates` (the numbers this call declined,
    or the dialog's unticked ones) and
    `pending` (those of the proposal still waiting: a partial approval keeps the rest)."""
    deferred = [{**d, "saved_as": _saved_as(d)} for d in report.deferred]
    data: dict[str, Any] = {"written": report.written, "deferred": deferred}
    said = _report_text(report.written, deferred, words)
    if report.declined:
        data["declined_candidates"] = report.declined  # `declined` (true) is a whole proposal revoked
        said += f"\nDeclined: {_numbers(report.declined)}."
    if report.pending:
        data["pending"] = report.pending
        until = f"until {iso(report.expires)}" if report.expires is not None else "until it expires"
        said += (
            f"\nStill pending: {_numbers(report.pending)}; the same approval token commits "
            f"{'it' if len(report.pending) == 1 else 'them'} {until}."
        )
    data.update(extra or {})
    return Outcome(True, said, data)


def _numbers(numbers: Sequence[int]) -> str:
    """`candidate 2`, `candidates 2, 4`."""
    return f"{'candidate' if len(numbers) == 1 else 'candidates'} {', '.join(map(str, numbers))}"


def _target(verdict: str) -> str | None:
    """The id a verdict line names: `NOOP duplicate of X`, `UPDATE X`, `SUPERSEDE X`."""
    if verdict.startswith(NOOP_LINE):
        return verdict.removeprefix(NOOP_LINE)
    kind, _, target = verdict.partition(" ")
    return target if kind in ("UPDATE", "SUPERSEDE") and target else None


def _saved_as(row: Mapping[str, Any]) -> str | None:
    """The memory that already holds a deferred candidate's text (its verdict now is NOOP)."""
    return _target(str(row["now"])) if str(row["now"]).startswith(NOOP_LINE) else None


def _why_not(row: Mapping[str, Any]) -> tuple[str, bool]:
    """Why a deferred candidate was not saved, and whether proposing it afresh would help."""
    if row["saved_as"] is not None:
        return f"already saved as {row['saved_as']}", False
    pinned, now, reason = str(row["pinned"]), str(row["now"]), str(row["reason"])
    if pinned != now and (changed := _target(pinned) or _target(now)) is not None and now != "invalid":
        return f"{changed} changed since the proposal (its verdict now: {now})", True
    if reason.startswith(STORE_CHANGED) and (changed := _target(pinned)) is not None:
        return f"{changed} changed since the proposal", True
    return reason.removesuffix("; propose again"), True


def _saved(row: Mapping[str, Any]) -> str:
    """`use-uv (.engram/memory/use-uv.md)`, with what an UPDATE or SUPERSEDE did."""
    verdict = str(row["verdict"])
    done = f"{row['id']} ({row['file']})"
    if verdict.startswith("UPDATE "):
        return done + ", updated in place"
    if verdict.startswith("SUPERSEDE "):
        return done + f", superseding {_target(verdict)} (kept, marked superseded)"
    return done


def _report_text(written: list[dict[str, Any]], deferred: list[dict[str, Any]], words: Words) -> str:
    notes = [w for w in written if w["verdict"] == "NOTE"]
    noun = "note" if notes and len(notes) == len(written) else "memory"
    reasons = {d["n"]: _why_not(d) for d in deferred}
    again = Next("propose_again")
    if not deferred:
        if not written:
            return "Nothing was saved."
        if len(written) == 1:
            return f"Saved {count(1, noun)}: {_saved(written[0])}."
        return "\n".join(
            [f"Saved {count(len(written), noun)}:", *(f"{w['n']}. {_saved(w)}" for w in written)]
        )
    if not written and len(deferred) == 1:
        why, fresh = reasons[deferred[0]["n"]]
        return f"Not saved: {why}" + (f"; {words(again)}." if fresh else ".")
    head = (
        f"Saved {count(len(written), noun)}, {len(deferred)} not saved:" if written else "Nothing was saved:"
    )
    rows = sorted(
        [(w["n"], _saved(w)) for w in written] + [(n, f"not saved: {why}") for n, (why, _) in reasons.items()]
    )
    lines = [head, *(f"{n}. {line}" for n, line in rows)]
    if changed := sum(1 for _, fresh in reasons.values() if fresh):
        lines.append(f"For {'that one' if changed == 1 else 'those'}: {words(again)}.")
    return "\n".join(lines)
