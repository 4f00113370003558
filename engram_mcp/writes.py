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
from store.store import Store
from store.verdicts import Verdict
from store.writer import CommitReport, Preview, iso

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
        verdict = Verdict(**e["verdict"])
        rows.append(
            {
                "n": e["n"],
                "verdict": verdict.line(),
                "target_id": verdict.target,
                "id": verdict.id,
                "type": e["type"],
                "title": e["title"],
                "scope": e["scope"],
                "similar": e["similar"],
            }
        )
    return rows


def preview_text(entries: Sequence[dict[str, Any]], redactions: int) -> str:
    lines = [f"Proposal: {len(entries)} candidate(s), {redactions} redaction(s). Nothing is saved yet.", ""]
    for e in entries:
        verdict = Verdict(**e["verdict"])
        lines.append(f"{e['n']}. Verdict: {verdict.line()}")
        lines.append(f"   [{e['type']}] {e['title']} → {verdict.id} ({e['scope']})")
        if e["similar"]:
            near = ", ".join(f"{s['id']} ({s['similarity']:.2f})" for s in e["similar"])
            lines.append(f"   Closest: {near}")
        body = e.get("body") or e.get("note_draft", {}).get("text", "")
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


def approval_schema(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Flat form: one boolean per candidate (verdict, id, title; never the text) and a scope."""
    properties: dict[str, Any] = {}
    for e in entries:
        verdict = Verdict(**e["verdict"])
        properties[f"candidate_{e['n']}"] = {
            "type": "boolean",
            "title": f"{e['n']}. {verdict.line()} {verdict.id} — {e['title']}"[:200],
            "default": True,
        }
    scopes = sorted({e["scope"] for e in entries})
    properties["scope"] = {
        "type": "string",
        "title": "Save scope",
        "enum": ["all", *scopes],
        "default": "all",
    }
    return {"type": "object", "properties": properties}


def chosen_entries(entries: Sequence[dict[str, Any]], content: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The candidates an accepted form keeps; ValueError says why an answer is invalid."""
    content = content or {}
    offered = {f"candidate_{e['n']}" for e in entries} | {"scope"}
    unknown = sorted(set(content) - offered)
    if unknown:
        raise ValueError(f"the answer names {', '.join(unknown)}, which were not offered")
    scope = content.get("scope", "all")
    if scope != "all" and scope not in {e["scope"] for e in entries}:
        raise ValueError(f"the answer widens the scope to {scope!r}")
    picks = {k: v for k, v in content.items() if k != "scope"}
    if not all(isinstance(v, bool) for v in picks.values()):
        raise ValueError("candidate answers must be true or false")
    return [e for e in entries if picks.get(f"candidate_{e['n']}", True) and scope in ("all", e["scope"])]


def proposal_flow(store: Store, entries: list[dict[str, Any]], redactions: int, origin: str) -> Flow:
    """Ask in the host's dialog; fall back to the token flow when it cannot or will not answer."""
    schema = approval_schema(entries)
    answer = yield Elicit(
        key=_shown_key("approval", schema),
        message=f"engram: save {len(entries)} memory candidate(s) to this project? Untick any you reject.",
        schema=schema,
    )
    if answer.action == "accept":
        try:
            chosen = chosen_entries(entries, answer.content)
        except ValueError as exc:
            writer.store_proposal(store, entries, redactions, origin, status="declined")
            return Outcome(
                True,
                f"Invalid answer in the approval dialog ({exc}): the proposal is revoked and nothing was saved.",
                {"candidates": preview_rows(entries), "redactions": redactions, "declined": True},
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
        message=f"engram: save the working note {draft.title!r} ({draft.id})?",
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
