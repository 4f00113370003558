"""The write tools: engram_save, engram_save_session, engram_commit, engram_note,
engram_set_role, engram_set_rule_variant (SPEC §4, §5). None is listed in read-only mode."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram_mcp.code_preview import CANDIDATE_PROPERTIES
from engram_mcp.outcome import Outcome, failure
from engram_mcp.schemas import ENVELOPE, SCOPES, memory_id, obj, text
from engram_mcp.tools.base import Flags, flow_handler
from engram_mcp.transcripts.sessions import HOSTS
from protocol.spec import Tool
from store.files.ids import ID_PATTERN
from store.files.memory import DURABLE_TYPES
from store.store import Store

if TYPE_CHECKING:
    from engram_mcp.ops.write_ops import Flow

APPROVE_NUMBERS = r"^\s*[0-9]{1,2}(\s*,\s*[0-9]{1,2})*\s*$(?!\n)"
"""`approve` as a string of comma-separated candidate numbers ("1", "1,3"); the range is checked
against the proposal when it is committed."""
_SLUG = {"type": "string", "pattern": ID_PATTERN, "maxLength": 64}
CANDIDATE = obj(
    {
        "type": {"type": "string", "enum": list(DURABLE_TYPES)},
        "title": text(None, 200, 1),
        "body": text("The knowledge itself, in markdown", 20000, 1),
        "scope": {"type": "string", "enum": list(SCOPES), "default": "project"},
        "tags": {"type": "array", "items": text(None, 64, 1), "maxItems": 20, "uniqueItems": True},
        "paths": {
            "type": "array",
            "items": text(None, 200, 1),
            "maxItems": 20,
            "description": "Globs of the files it is about",
        },
        "always": {"type": "boolean", "description": "Core tier: loaded for every task; use sparingly"},
        "id": memory_id("Id (a-z, 0-9, -): new, or existing to update"),
        "supersedes": memory_id("Id of the memory it replaces"),
        **CANDIDATE_PROPERTIES,  # engram_mcp.code_preview: refs, valid_until, review_after
    },
    ("type", "title", "body"),
)
SAVE_INPUT = obj(
    {"candidates": {"type": "array", "items": CANDIDATE, "minItems": 1, "maxItems": 20}},
    ("candidates",),
)
SAVE_SESSION_INPUT = obj(
    {
        "text": text("Notes or a transcript to mine", 200000, 1),
        "query_level": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": "Instead of text: how many recent host sessions to mine",
        },
        "host": {"type": "string", "enum": list(HOSTS), "description": "With query_level: only this host's"},
    }
)
COMMIT_INPUT = obj(
    {
        "approval_token": text("From the preview the human approved", 200, 1),
        "approve": {
            "description": '"all", or candidate numbers: [1, 3] or "1,3"',
            "anyOf": [
                {"type": "string", "enum": ["all"]},
                {"type": "string", "pattern": APPROVE_NUMBERS, "maxLength": 100},
                {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 1, "maximum": 20},
                    "minItems": 1,
                    "maxItems": 20,
                    "uniqueItems": True,
                },
            ],
        },
    },
    ("approval_token", "approve"),
)
NOTE_INPUT = obj(
    {
        "text": text("What you found, or where you are", 2000, 1),
        "objective": text("The session objective it belongs to", 500),
        "type": {"type": "string", "enum": list(DURABLE_TYPES), "description": "Its type if promoted"},
        "scope": {"type": "string", "enum": ["project"], "default": "project"},
    },
    ("text",),
)
ROLE_INPUT = obj(
    {"role": _SLUG | {"description": "Role (a-z, 0-9, -), e.g. reviewer; default resets"}}, ("role",)
)
VARIANT_INPUT = obj(
    {
        "mode": {"type": "string", "enum": ["base", "fixed", "rotate"]},
        "variant": text("Variant name, for fixed", 64, 1),
        "id": memory_id("Memory id: only this rule"),
    },
    ("mode",),
)


def tools(store: Store, flags: Flags) -> tuple[Tool, ...]:
    """The write tools. What they run (the write path: redaction, verdicts, proposals, commits)
    is imported by their first call, so a server that only reads never loads it."""
    if flags.read_only:
        return ()

    def save(args: dict[str, Any]) -> Flow:
        from engram_mcp.ops import write_ops
        from store.write import proposals, transaction

        transaction.check_workspace(store)  # refused before the human is asked anything
        entries, redactions = proposals.draft(store, args["candidates"])
        return write_ops.proposal_flow(store, entries, redactions, "save")

    def save_session(args: dict[str, Any]) -> Flow | Outcome:
        from engram_mcp.ops import write_ops
        from engram_mcp.transcripts.sessions import session_candidates
        from store.write import mining, proposals, transaction

        transaction.check_workspace(store)
        if ("text" in args) == ("query_level" in args):
            return failure("ENGRAM_VALIDATION", "pass exactly one of `text` and `query_level`", written=False)
        if "host" in args and "text" in args:
            return failure(
                "ENGRAM_VALIDATION", "`host` goes with `query_level`, not with `text`", written=False
            )
        note = ""
        if "text" in args:
            raw = mining.extract_candidates(args["text"])
        else:
            raw, note = session_candidates(store.workspace, args["query_level"], args.get("host"))
        if not raw:
            return failure(
                "ENGRAM_VALIDATION",
                "no explicit knowledge lines found (decisions, rules with always/never/must, gotchas, "
                "'remember …')"
                + (f"; {note}" if note else "")
                + "; call engram_save with candidates instead",
                written=False,
            )
        entries, redactions = proposals.draft(store, raw)
        return write_ops.proposal_flow(store, entries, redactions, "save_session")

    def note(args: dict[str, Any]) -> Flow:
        from engram_mcp.ops import write_ops
        from store.write import notes, transaction

        transaction.check_workspace(store)
        draft = notes.draft_note(store, args["text"], args.get("objective", ""), args.get("type"))
        return write_ops.note_flow(store, draft)

    def commit(args: dict[str, Any]) -> Flow | Outcome:
        from engram_mcp.ops import write_ops

        return write_ops.commit(store, args["approval_token"], args["approve"])

    def set_role(args: dict[str, Any]) -> Flow | Outcome:
        from engram_mcp.ops import write_ops

        return write_ops.set_role(store, args["role"])

    def set_rule_variant(args: dict[str, Any]) -> Flow | Outcome:
        from engram_mcp.ops import write_ops

        return write_ops.set_rule_variant(store, args["mode"], args.get("variant"), args.get("id"))

    proposal_annotations = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
    return (
        Tool(
            name="engram_save",
            title="Propose memories",
            description=(
                "Propose 1-20 lasting project memories. Writes nothing: returns a numbered preview with a verdict "
                "per candidate (ADD, UPDATE <id>, SUPERSEDE <id>, NOOP) and an approval_token, or asks the human "
                "in the host's dialog. Show the preview to the human."
            ),
            input_schema=SAVE_INPUT,
            output_schema=ENVELOPE,
            annotations=proposal_annotations,
            handler=flow_handler(save),
        ),
        Tool(
            name="engram_save_session",
            title="Propose memories from session text",
            description=(
                "Mine `text`, or the human's messages in this workspace's last `query_level` host sessions, for "
                "explicit knowledge lines (decisions, always/never rules, gotchas, 'remember …') and propose them "
                "like engram_save. Writes nothing."
            ),
            input_schema=SAVE_SESSION_INPUT,
            output_schema=ENVELOPE,
            annotations=proposal_annotations,
            handler=flow_handler(save_session),
        ),
        Tool(
            name="engram_commit",
            title="Commit approved memories",
            description=(
                "Write the candidates of a proposal the human explicitly approved. Never call this before the "
                "human has approved the displayed candidates. One whose verdict changed since is deferred: propose "
                "it again."
            ),
            input_schema=COMMIT_INPUT,
            output_schema=ENVELOPE,
            annotations={
                "readOnlyHint": False,
                "destructiveHint": True,
                "openWorldHint": False,
            },
            meta={"anthropic/requiresUserInteraction": True},
            handler=flow_handler(commit),
        ),
        Tool(
            name="engram_note",
            title="Save a working note",
            description=(
                "Save a short working note for this task (kept 7 days by default). Secrets are redacted; "
                "instruction-like lines are refused. Asks the human once (dialog or approval_token)."
            ),
            input_schema=NOTE_INPUT,
            output_schema=ENVELOPE,
            annotations={"readOnlyHint": False, "openWorldHint": False},
            handler=flow_handler(note),
        ),
        Tool(
            name="engram_set_role",
            title="Set the active role",
            description="Set the workspace's active role: memories with `roles` load in the core and class tiers only for it.",
            input_schema=ROLE_INPUT,
            output_schema=ENVELOPE,
            annotations={
                "readOnlyHint": False,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
            handler=flow_handler(set_role),
        ),
        Tool(
            name="engram_set_rule_variant",
            title="Set the rule-variant mode",
            description=(
                "Choose which wording of rules engram_load shows: base (the body), fixed (the named variant) or "
                "rotate (one variant per session objective)."
            ),
            input_schema=VARIANT_INPUT,
            output_schema=ENVELOPE,
            annotations={
                "readOnlyHint": False,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
            handler=flow_handler(set_rule_variant),
        ),
    )
