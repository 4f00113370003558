"""The write operations shared by the MCP tools and the CLI: proposals, commits, notes, settings.

A write tool's declaration (engram_mcp.mcp.tools.write_tools) points at one of these; each takes the
store and the validated arguments. The approval dialog lives here as generator flows (see
protocol.elicitation): each computes its preview without side effects, yields one question,
and only then writes.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Final

from engram_mcp.intake.transcripts.sessions import session_candidates
from engram_mcp.ops.dialog import chosen_entries, dialog, note_message, shown_key
from engram_mcp.ops.outcome import Outcome, failure
from engram_mcp.ops.previews import report_outcome, rows, token_outcome
from engram_mcp.ops.shown import shown
from engram_mcp.ops.wording import tool_wording
from protocol.spec import Elicit, ElicitAnswer
from store.errors import Next, Words
from store.files.memory import iso
from store.propose import mining
from store.store import Store
from store.write import commits, notes, proposals, settings, transaction
from store.write.proposal_entry import ProposalEntry, note_entry

Flow = Generator[Elicit, ElicitAnswer, Outcome]
FALLBACK: Final = {
    "cancel": "the approval dialog was cancelled",
    "timeout": "the approval dialog got no answer in time",
    "error": "the client could not show the approval dialog",
}


NO_KNOWLEDGE: Final = (
    "no explicit knowledge lines found (decisions, rules with always/never/must, gotchas, 'remember …')"
)


def save(store: Store, args: dict[str, Any]) -> Flow:
    """engram_save: the candidates' proposal, asked in the dialog or kept for a token."""
    transaction.check_workspace(store)  # refused before the human is asked anything
    entries, redactions = proposals.draft(store, args["candidates"])
    return proposal_flow(store, entries, redactions, "save")


def save_session(store: Store, args: dict[str, Any]) -> Flow | Outcome:
    """engram_save_session: the knowledge lines of `text`, or of the human's messages in the last
    `query_level` host sessions, proposed like engram_save."""
    transaction.check_workspace(store)
    if ("text" in args) == ("query_level" in args):
        return failure("ENGRAM_VALIDATION", "pass exactly one of `text` and `query_level`", written=False)
    if "host" in args and "text" in args:
        return failure("ENGRAM_VALIDATION", "`host` goes with `query_level`, not with `text`", written=False)
    note = ""
    if "text" in args:
        raw = mining.extract_candidates(args["text"])
    else:
        raw, note = session_candidates(store.workspace, args["query_level"], args.get("host"))
    if not raw:
        return failure(
            "ENGRAM_VALIDATION",
            NO_KNOWLEDGE + (f"; {note}" if note else "") + f"; {tool_wording(Next('save_instead'))}",
            written=False,
        )
    entries, redactions = proposals.draft(store, raw)
    return proposal_flow(store, entries, redactions, "save_session")


def note(store: Store, args: dict[str, Any]) -> Flow:
    """engram_note: a working note, confirmed in the dialog or kept for a token."""
    transaction.check_workspace(store)
    draft = notes.draft_note(store, args["text"], args.get("objective", ""), args.get("type"))
    return note_flow(store, draft)


def proposal_flow(store: Store, entries: list[ProposalEntry], redactions: int, origin: str) -> Flow:
    """Ask in the host's dialog; fall back to the token flow when it cannot or will not answer.

    Accept writes exactly the ticked candidates; an unticked one (or one outside the scope
    chosen) is declined: the human saw it and said no (README "Dialog flow"), so nothing of it
    is kept for later, unlike a partial commit by token (store.write.commits), and the result
    names it (`declined`), as a decline at the terminal or in engram ui is named. Decline, or an invalid
    answer, records the whole proposal declined in the dialog (its token fails ENGRAM_DECLINED).
    """
    view = shown(entries, redactions, proposals.drafted(entries))  # one value for the dialog and every row
    message, schema = dialog(view)
    answer = yield Elicit(key=shown_key("approval", [schema, message]), message=message, schema=schema)
    if answer.action == "accept":
        try:
            chosen = chosen_entries(entries, answer.content, schema)
        except ValueError as exc:
            revoked = proposals.store_proposal(store, entries, redactions, origin, status="declined")
            return Outcome(
                True,
                f"Invalid answer in the approval dialog ({exc}): the proposal is revoked and nothing was saved.",
                {
                    "candidates": rows(view),
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
                    "candidates": rows(view),
                    "redactions": redactions,
                    "written": [],
                    "deferred": [],
                },
            )
        report = commits.apply_entries(store, chosen)
        kept = {e.n for e in chosen}
        report.declined = [e.n for e in entries if e.n not in kept]  # unticked: the human said no
        outcome = report_outcome(report)
        outcome.data.update(candidates=rows(view), redactions=redactions)
        return outcome
    if answer.action == "decline":
        preview = proposals.store_proposal(store, entries, redactions, origin, status="declined")
        data = {
            "declined": True,
            "approval_token": preview.token,
            "candidates": rows(view),
            "redactions": redactions,
        }
        return Outcome(
            True,
            "The human declined in the approval dialog; nothing was saved and the proposal is revoked.",
            data,
        )
    preview = proposals.store_proposal(store, entries, redactions, origin)
    reason = FALLBACK.get(answer.action)
    return token_outcome(preview, prefix=f"nothing was saved: {reason}.\n" if reason else "")


def note_flow(store: Store, draft: notes.NoteDraft) -> Flow:
    message = note_message(draft)
    answer = yield Elicit(
        key=shown_key("confirm", [draft.id, message]),
        message=message,
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
    preview = proposals.store_proposal(store, [note_entry(draft)], draft.redactions, "note")
    reason = FALLBACK.get(answer.action)
    outcome = token_outcome(preview, prefix=f"nothing was saved: {reason}.\n" if reason else "")
    data = {"approval_token": preview.token, "expires_at": iso(preview.expires)}
    return Outcome(True, outcome.text, data, hints=outcome.hints)


def commit(
    store: Store, token: str, approve: object, words: Words = tool_wording, where: str | None = None
) -> Outcome:
    """Commit candidates of a pending proposal; what it wrote and did not, and what still waits
    under the same token (a partial approval keeps the rest: store.write.commits), its next steps
    in `words`. `where` is recorded with each decision: "agent" for engram_commit, "cli" for
    `engram commit` (by default, which of the two `words` is)."""
    where = where or ("agent" if words is tool_wording else "cli")
    return report_outcome(commits.commit(store, token, approve, where), words=words)


def set_role(store: Store, role: str) -> Outcome:
    previous, current = settings.set_role(store, role)
    return Outcome(True, f"Role: {previous} → {current}.", {"previous": previous, "current": current})


def set_rule_variant(store: Store, mode: str, variant: str | None, memory_id: str | None) -> Outcome:
    previous, current = settings.set_rule_variant(store, mode, variant, memory_id)
    return Outcome(True, f"Rule variant: {previous} → {current}.", {"previous": previous, "current": current})
