"""The write tools, declared: engram_save, engram_save_session, engram_commit, engram_note,
engram_set_role, engram_set_rule_variant (SPEC §4, §5). What each does is the
engram_mcp.ops.write_ops function it points at. None is listed in read-only mode: their
annotations say readOnlyHint false (engram_mcp.mcp.tools)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from engram_mcp.intake.transcripts import HOSTS
from engram_mcp.mcp.schemas import SCOPES, memory_id, obj, text
from engram_mcp.mcp.tools.base import Declared, Flags, Start, flow_handler
from protocol.spec import Tool
from store.files.ids import ID_PATTERN
from store.files.memory import DURABLE_TYPES
from store.store import Store

if TYPE_CHECKING:
    from engram_mcp.ops.outcome import Outcome
    from engram_mcp.ops.write_ops import Flow

APPROVE_NUMBERS = r"^\s*[0-9]{1,2}(\s*,\s*[0-9]{1,2})*\s*$(?!\n)"
"""`approve` as a string of comma-separated candidate numbers ("1", "1,3"); the range is checked
against the proposal when it is committed."""
_SLUG = {"type": "string", "pattern": ID_PATTERN, "maxLength": 64}
_DATE: Final = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$(?!\n)", "maxLength": 10}
CODE_PROPERTIES: Final = {
    "refs": {
        "type": "array",
        "items": text(None, 300, 1),
        "maxItems": 20,
        "description": "Code it cites, checked on reads: workspace-relative path, path#symbol or glob. Omit: found in the text; []: none",
    },
    "valid_until": _DATE | {"description": "YYYY-MM-DD: left out of reads after it"},
    "review_after": _DATE | {"description": "YYYY-MM-DD: flagged for review from it"},
}
"""The candidate fields beyond the seed ones (SPEC §4.1); the preview shows them (engram_mcp.ops.shown)."""
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
        **CODE_PROPERTIES,
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


PROPOSAL_ANNOTATIONS: Final = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
SETTING_ANNOTATIONS: Final = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
SAVE: Final = Declared(
    name="engram_save",
    title="Propose memories",
    description=(
        "Propose 1-20 lasting project memories. Writes nothing: returns a numbered preview with a verdict "
        "per candidate (ADD, UPDATE <id>, SUPERSEDE <id>, NOOP) and an approval_token, or asks the human "
        "in the host's dialog. Show the preview to the human."
    ),
    input_schema=SAVE_INPUT,
    annotations=PROPOSAL_ANNOTATIONS,
)
SAVE_SESSION: Final = Declared(
    name="engram_save_session",
    title="Propose memories from session text",
    description=(
        "Mine `text`, or the human's messages in this workspace's last `query_level` host sessions, for "
        "explicit knowledge lines (decisions, always/never rules, gotchas, 'remember …') and propose them "
        "like engram_save. Writes nothing."
    ),
    input_schema=SAVE_SESSION_INPUT,
    annotations=PROPOSAL_ANNOTATIONS,
)
COMMIT: Final = Declared(
    name="engram_commit",
    title="Commit approved memories",
    description=(
        "Write the candidates of a proposal the human explicitly approved. Never call this before the "
        "human has approved the displayed candidates. One whose verdict changed since is deferred: propose "
        "it again."
    ),
    input_schema=COMMIT_INPUT,
    annotations={"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False},
    meta={"anthropic/requiresUserInteraction": True},
)
NOTE: Final = Declared(
    name="engram_note",
    title="Save a working note",
    description=(
        "Save a short working note for this task (kept 7 days by default). Secrets are redacted; "
        "instruction-like lines are refused. Asks the human once (dialog or approval_token)."
    ),
    input_schema=NOTE_INPUT,
    annotations={"readOnlyHint": False, "openWorldHint": False},
)
SET_ROLE: Final = Declared(
    name="engram_set_role",
    title="Set the active role",
    description="Set the workspace's active role: memories with `roles` load in the core and class tiers only for it.",
    input_schema=ROLE_INPUT,
    annotations=SETTING_ANNOTATIONS,
)
SET_RULE_VARIANT: Final = Declared(
    name="engram_set_rule_variant",
    title="Set the rule-variant mode",
    description=(
        "Choose which wording of rules engram_load shows: base (the body), fixed (the named variant) or "
        "rotate (one variant per session objective)."
    ),
    input_schema=VARIANT_INPUT,
    annotations=SETTING_ANNOTATIONS,
)
DECLARED: Final = (SAVE, SAVE_SESSION, COMMIT, NOTE, SET_ROLE, SET_RULE_VARIANT)


def _write_ops() -> ModuleType:
    """engram_mcp.ops.write_ops, and with it the write path (redaction, verdicts, proposals,
    commits): imported by the first write call, so a server that only reads never loads it."""
    from engram_mcp.ops import write_ops  # seam: the write path, on the first write call

    return write_ops


def tools(store: Store, flags: Flags) -> tuple[Tool, ...]:
    """The write tools bound to `store`, each to the engram_mcp.ops.write_ops function it runs."""

    def runs(operation: Callable[[ModuleType, dict[str, Any]], Flow | Outcome]) -> Start:
        return lambda args: operation(_write_ops(), args)

    return (
        SAVE.bound(flow_handler(runs(lambda ops, args: ops.save(store, args)))),
        SAVE_SESSION.bound(flow_handler(runs(lambda ops, args: ops.save_session(store, args)))),
        COMMIT.bound(
            flow_handler(runs(lambda ops, args: ops.commit(store, args["approval_token"], args["approve"])))
        ),
        NOTE.bound(flow_handler(runs(lambda ops, args: ops.note(store, args)))),
        SET_ROLE.bound(flow_handler(runs(lambda ops, args: ops.set_role(store, args["role"])))),
        SET_RULE_VARIANT.bound(
            flow_handler(
                runs(
                    lambda ops, args: ops.set_rule_variant(
                        store, args["mode"], args.get("variant"), args.get("id")
                    )
                )
            )
        ),
    )
