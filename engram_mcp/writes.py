"""The write operations shared by the MCP tools and the CLI: proposals, commits, notes, settings.

The approval dialog lives here as generator flows (see protocol.elicitation): each computes
its preview without side effects, yields one question, and only then writes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Generator, Sequence
from typing import Any, Final

import orjson

from engram_mcp.outcome import Outcome
from protocol.spec import Elicit, ElicitAnswer
from store import notes, settings, writer
from store.approvals import MAX_PROPOSALS
from store.memory import iso
from store.store import Store
from store.verdicts import Verdict
from store.writer import CommitReport, Preview

Flow = Generator[Elicit, ElicitAnswer, Outcome]
COMMIT_HINT: Final = (
    "Show these candidates to the human. Call engram_commit with this approval_token and "
    'approve: "all" or the approved numbers only after the human explicitly approves.'
)
FALLBACK: Final = {
    "cancel": "the approval dialog was cancelled",
    "timeout": "the approval dialog got no answer in time",
    "error": "the client could not show the approval dialog",
}


def preview_rows(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for e in entries:
        verdict = Verdict.of(e["verdict"])
        fields = written_fields(e)
        row: dict[str, Any] = {
            "n": e["n"],
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
            "similar": e["similar"],
        }
        if verdict.shadows:
            row["shadows"] = verdict.shadows
        rows.append(row)
    return rows


def written_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """What the candidate's file will say (type, title, scope, tags, paths, always, roles):
    the fields the commit re-checks against the ones shown. A NOOP writes nothing; its own
    fields are shown."""
    fields = entry.get("fields")
    if fields:
        return dict(fields)
    return {
        "type": entry["type"],
        "title": entry["title"],
        "scope": entry["scope"],
        "tags": list(entry.get("tags", ())),
        "paths": list(entry.get("paths", ())),
        "always": False,
        "roles": [],
    }


def _listed(values: Sequence[str]) -> str:
    return ", ".join(values) if values else "none"


def preview_text(entries: Sequence[dict[str, Any]], redactions: int) -> str:
    lines = [f"Proposal: {len(entries)} candidate(s), {redactions} redaction(s). Nothing is saved yet.", ""]
    for e in entries:
        verdict = Verdict.of(e["verdict"])
        draft = e.get("note_draft")
        shadows = f" (shadows {verdict.shadows} in this workspace)" if verdict.shadows else ""
        lines.append(f"{e['n']}. Verdict: {verdict.line()}{shadows}")
        if draft is not None:
            lines.append(f"   [note] {draft['title']} → {draft['id']} ({draft['scope']})")
            if draft.get("objective"):
                lines.append(f"   objective: {draft['objective']}")
        else:
            f = written_fields(e)
            lines.append(f"   [{f['type']}] {f['title']} → {verdict.id} ({f['scope']})")
            lines.append(
                f"   tags: {_listed(f['tags'])} · paths: {_listed(f['paths'])} · "
                f"always: {'yes' if f['always'] else 'no'} · roles: {_listed(f['roles']) if f['roles'] else 'all'}"
            )
        if e["similar"]:
            near = ", ".join(
                f"{'user:' if s.get('scope') == 'user' else ''}{s['id']} ({s['similarity']:.2f})"
                for s in e["similar"]
            )
            lines.append(f"   Closest: {near}")
        body = e.get("body") or (draft or {}).get("text", "")
        lines.extend("   | " + line for line in body.rstrip("\n").splitlines())
        lines.append("")
    return "\n".join(lines)


def token_outcome(preview: Preview, prefix: str = "") -> Outcome:
    data = {
        "approval_token": preview.token,
        "expires_at": iso(preview.expires),
        "candidates": preview_rows(preview.candidates),
        "redactions": preview.redactions,
    }
    text = (
        prefix
        + preview_text(preview.candidates, preview.redactions)
        + f"approval_token: {preview.token} (expires {iso(preview.expires)})\n{COMMIT_HINT}"
    )
    if preview.dropped:
        text += (
            f"\n{preview.dropped} older pending proposal(s) were dropped to keep the pending file within "
            f"its cap ({MAX_PROPOSALS} proposals); their tokens no longer work."
        )
    return Outcome(True, text, data)


def report_outcome(report: CommitReport, extra: dict[str, Any] | None = None) -> Outcome:
    lines = [f"Written: {len(report.written)}; deferred: {len(report.deferred)}."]
    lines += [f"{w['n']}. {w['verdict']} → {w['id']} ({w['file']})" for w in report.written]
    lines += [
        f"{d['n']}. deferred: was {d['pinned']}, now {d['now']}: {d['reason']}" for d in report.deferred
    ]
    return Outcome(
        True, "\n".join(lines), {"written": report.written, "deferred": report.deferred, **(extra or {})}
    )


def _shown_key(name: str, shown: Any) -> str:
    """A question key that changes when what the human is shown changes: a 2026-07-28 retry
    whose re-computed preview differs (the store changed meanwhile) is asked again instead of
    applying an answer given to another preview."""
    digest = hashlib.sha256(orjson.dumps(shown, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]
    return f"{name}-{digest}"


TITLE_LIMIT: Final = 300
"""A dialog title's length; the routing marks come before the memory title, so a cut only
shortens the title."""


def _mark(name: str, values: Sequence[str]) -> str:
    if not values:
        return ""
    shown = [v if len(v) <= 24 else v[:23] + "…" for v in values[:3]]
    more = f" +{len(values) - 3} more" if len(values) > 3 else ""
    return f" [{name}: {', '.join(shown)}{more}]"


def dialog_title(entry: dict[str, Any]) -> str:
    """`1. ADD use-uv [always] [paths: **] [tags: python] — Use uv…`: verdict, id, routing marks."""
    verdict = Verdict.of(entry["verdict"])
    fields = written_fields(entry)
    line = verdict.line()
    head = f"{entry['n']}. {line}" + ("" if line.endswith(f" {verdict.id}") else f" {verdict.id}")
    if fields["scope"] != "project":
        head += f" [{fields['scope']} scope]"
    if verdict.shadows:
        head += f" [shadows {verdict.shadows}]"
    if fields["always"]:
        head += " [always]"
    head += _mark("paths", fields["paths"]) + _mark("roles", fields["roles"]) + _mark("tags", fields["tags"])
    return f"{head} — {fields['title']}"[:TITLE_LIMIT]


def approval_schema(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Flat form: one boolean per candidate (verdict, id, routing marks, title; never the text)
    and a scope."""
    properties: dict[str, Any] = {}
    for e in entries:
        properties[f"candidate_{e['n']}"] = {"type": "boolean", "title": dialog_title(e), "default": True}
    scopes = sorted({e["scope"] for e in entries})
    properties["scope"] = {
        "type": "string",
        "title": "Save scope",
        "enum": ["all", *scopes],
        "default": "all",
    }
    return {"type": "object", "properties": properties}


def _shown(value: Any) -> str:
    """A client's value for a message, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def chosen_entries(entries: Sequence[dict[str, Any]], content: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The candidates an accepted form keeps; ValueError says why an answer is invalid (a key
    not offered, a value of the wrong type, a widened scope)."""
    content = content or {}
    offered = {f"candidate_{e['n']}" for e in entries} | {"scope"}
    unknown = sorted(set(content) - offered)
    if unknown:
        names = ", ".join(_shown(k)[1:-1] for k in unknown[:3]) + (" and more" if len(unknown) > 3 else "")
        raise ValueError(f"the answer names {names}, which were not offered")
    scopes = sorted({e["scope"] for e in entries})
    scope = content.get("scope", "all")
    if not isinstance(scope, str):
        raise ValueError(f"scope must be one of {', '.join(['all', *scopes])}, not {_shown(scope)}")
    if scope != "all" and scope not in scopes:
        raise ValueError(f"the answer widens the scope to {_shown(scope)}")
    picks = {k: v for k, v in content.items() if k != "scope"}
    for key, value in sorted(picks.items()):
        if not isinstance(value, bool):
            raise ValueError(f"{key} must be true or false, not {_shown(value)}")
    return [e for e in entries if picks.get(f"candidate_{e['n']}", True) and scope in ("all", e["scope"])]


def proposal_flow(store: Store, entries: list[dict[str, Any]], redactions: int, origin: str) -> Flow:
    """Ask in the host's dialog; fall back to the token flow when it cannot or will not answer."""
    schema = approval_schema(entries)
    answer = yield Elicit(
        key=_shown_key("approval", schema),
        message=f"engram: save {len(entries)} memory candidate(s) to this project? Untick any you reject."
        + (f" ({redactions} secret(s) redacted.)" if redactions else ""),
        schema=schema,
    )
    if answer.action == "accept":
        try:
            chosen = chosen_entries(entries, answer.content)
        except ValueError as exc:
            revoked = writer.store_proposal(store, entries, redactions, origin, status="declined")
            return Outcome(
                True,
                f"Invalid answer in the approval dialog ({exc}): the proposal is revoked and nothing was saved.",
                {
                    "candidates": preview_rows(entries),
                    "redactions": redactions,
                    "declined": True,
                    "approval_token": revoked.token,
                },
            )
        if not chosen:
            return Outcome(
                True,
                "Nothing was selected in the approval dialog; nothing was saved.",
                {
                    "candidates": preview_rows(entries),
                    "redactions": redactions,
                    "written": [],
                    "deferred": [],
                },
            )
        outcome = report_outcome(writer.apply_entries(store, chosen))
        outcome.data.update(candidates=preview_rows(entries), redactions=redactions)
        return outcome
    if answer.action == "decline":
        preview = writer.store_proposal(store, entries, redactions, origin, status="declined")
        data = {
            "declined": True,
            "approval_token": preview.token,
            "candidates": preview_rows(entries),
            "redactions": redactions,
        }
        return Outcome(
            True,
            "The human declined in the approval dialog; nothing was saved and the proposal is revoked.",
            data,
        )
    preview = writer.store_proposal(store, entries, redactions, origin)
    reason = FALLBACK.get(answer.action)
    return token_outcome(preview, prefix=f"nothing was saved: {reason}.\n" if reason else "")


def note_flow(store: Store, draft: notes.NoteDraft) -> Flow:
    answer = yield Elicit(
        key=_shown_key("confirm", [draft.id, draft.title, draft.text]),
        message=f"engram: save the working note {draft.title!r} ({draft.id})?"
        + (f" ({draft.redactions} secret(s) redacted.)" if draft.redactions else ""),
        schema={
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "title": "Save this note", "default": True}},
        },
    )
    if answer.action == "accept":
        if (answer.content or {}).get("confirm", True) is not True:
            return Outcome(True, "The note was not confirmed; nothing was saved.", {"declined": True})
        saved = notes.save_note(store, draft)
        return Outcome(
            True, f"Saved note {saved['id']} ({saved['file']}), valid until {saved['valid_until']}.", saved
        )
    if answer.action in ("decline", "cancel", "timeout"):
        return Outcome(
            True, f"The note was not saved ({answer.action} in the approval dialog).", {"declined": True}
        )
    preview = writer.store_proposal(store, [writer.note_entry(draft)], draft.redactions, "note")
    reason = FALLBACK.get(answer.action)
    outcome = token_outcome(preview, prefix=f"nothing was saved: {reason}.\n" if reason else "")
    return Outcome(True, outcome.text, {"approval_token": preview.token, "expires_at": iso(preview.expires)})


def commit(store: Store, token: str, approve: object) -> Outcome:
    return report_outcome(writer.commit(store, token, approve))


def set_role(store: Store, role: str) -> Outcome:
    previous, current = settings.set_role(store, role)
    return Outcome(True, f"Role: {previous} → {current}.", {"previous": previous, "current": current})


def set_rule_variant(store: Store, mode: str, variant: str | None, memory_id: str | None) -> Outcome:
    previous, current = settings.set_rule_variant(store, mode, variant, memory_id)
    return Outcome(True, f"Rule variant: {previous} → {current}.", {"previous": previous, "current": current})
