"""engram_load, engram_route, engram_search, engram_verify, engram_status (SPEC §3, §5)."""

from __future__ import annotations

from engram_mcp.ops import read_ops
from engram_mcp.schemas import (
    MEMORY_ID,
    MEMORY_TYPES,
    SCOPES,
    STRINGS,
    data,
    envelope,
    flag,
    integer,
    obj,
    text,
)
from engram_mcp.tools.base import READ_ONLY_ANNOTATIONS, Flags, handler
from protocol.spec import Tool
from store.read.load import DISCLOSURES
from store.store import Store

_ENTRY_BASE = {"id": {"type": "string"}, "type": {"type": "string"}, "scope": {"type": "string"}}
_SCORE = {"type": "number"}
_MARK = {
    "type": "object",
    "properties": {"kind": {"type": "string", "enum": ["stale", "review"]}, "reason": {"type": "string"}},
    "required": ["kind", "reason"],
}
_MARKS = {"type": "array", "items": _MARK, "description": "staleness marks (only when there are any)"}

LOAD_INPUT = obj(
    {
        "query": text("The task or question to load memory for; empty loads the core tier", 2000),
        "id": MEMORY_ID
        | {"description": "Load exactly this memory's body (budget ignored; counts as a fetch)"},
        "budget_tokens": integer("Token budget for the answer (tokens = ceil(chars/4))", 100, 32000, 2000),
        "disclosure": {
            "type": "string",
            "enum": list(DISCLOSURES),
            "default": "tiered",
            "description": "tiered: bodies, then cards, then omitted ids; cards: cards only; bodies: bodies only",
        },
        "full": flag("Every active memory's body in load order, up to load.full_cap_tokens"),
        "explain": flag("Add why each memory was selected"),
        "include_stale": flag("Give stale memories (a code reference broken) as bodies, not cards"),
        "objective": text("Session objective; working notes with this objective appear as cards", 500),
    }
)
LOAD_OUTPUT = envelope(
    data(
        {
            "task_class": {"type": "string"},
            "selected_keys": STRINGS,
            "body_keys": STRINGS,
            "card_ids": STRINGS,
            "omitted_ids": STRINGS,
            "tokens": {"type": "integer", "minimum": 0},
            "reasons": {"type": "object", "additionalProperties": {"type": "string"}},
            "memories": {
                "type": "array",
                "description": "The memories the answer shows, in load order (the omitted are in omitted_ids); body only for the body tier",
                "items": data(
                    {
                        "id": {"type": "string"},
                        "type": {"type": "string"},
                        "title": {"type": "string"},
                        "tier": {"type": "string", "enum": ["body", "card"]},
                        "tokens": {"type": "integer", "minimum": 0},
                        "body": {"type": "string"},
                    },
                    ("id", "type", "title", "tier", "tokens"),
                ),
            },
            "marks": {"type": "object", "additionalProperties": _MARKS},
        },
        ("selected_keys", "body_keys", "card_ids", "omitted_ids", "tokens", "memories"),
    )
)

ROUTE_INPUT = obj({"task": text("The task description to classify and route", 2000, 1)}, ("task",))
ROUTE_OUTPUT = envelope(
    data(
        {
            "task_class": {"type": "string"},
            "entries": {
                "type": "array",
                "items": data(
                    _ENTRY_BASE
                    | {
                        "score": _SCORE,
                        "tier": {"type": "string"},
                        "reason": {"type": "string"},
                        "marks": _MARKS,
                    },
                    ("id", "type", "scope", "score", "reason"),
                ),
            },
        },
        ("task_class", "entries"),
    )
)

SEARCH_INPUT = obj(
    {
        "query": text("Words to search for in titles, tags and bodies", 1000, 1),
        "limit": integer("Most results to return", 1, 50, 10),
        "types": {
            "type": "array",
            "items": {"type": "string", "enum": list(MEMORY_TYPES)},
            "maxItems": len(MEMORY_TYPES),
            "uniqueItems": True,
            "description": "Only these memory types",
        },
        "scope": {"type": "string", "enum": list(SCOPES), "description": "Only this scope"},
        "include_notes": flag("Include live working notes", True),
        "include_superseded": flag("Include superseded memories"),
    },
    ("query",),
)
SEARCH_OUTPUT = envelope(
    data(
        {
            "entries": {
                "type": "array",
                "items": data(
                    _ENTRY_BASE
                    | {
                        "score": _SCORE,
                        "title": {"type": "string"},
                        "snippet": {"type": "string"},
                        "marks": _MARKS,
                    },
                    ("id", "type", "scope", "score", "title", "snippet"),
                ),
            },
            "backends_used": STRINGS,
        },
        ("entries", "backends_used"),
    )
)

NO_ARGUMENTS = obj({})
_IDS = STRINGS
VERIFY_OUTPUT = envelope(
    data(
        {
            "ok": {"type": "boolean"},
            "checked": {"type": "integer", "minimum": 0},
            "mismatched": _IDS,
            "missing": _IDS,
            "unindexed": _IDS,
            "pending": {"type": "integer", "minimum": 0},
        },
        ("ok", "checked", "mismatched", "missing", "unindexed", "pending"),
    )
)
STATUS_OUTPUT = envelope(
    data(
        {
            "workspace": {"type": "string"},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "role": {"type": "string"},
            "rule_variant": {"type": "string"},
            "pending_proposals": {"type": "integer", "minimum": 0},
            "index": data(
                {"hash": {"type": "string"}, "memories": {"type": "integer"}}, ("hash", "memories")
            ),
        },
        ("workspace", "counts", "role", "rule_variant", "pending_proposals", "index"),
    )
)


def tools(store: Store, flags: Flags) -> tuple[Tool, ...]:
    load_meta = {"anthropic/alwaysLoad": True} if flags.always_load else None
    return (
        Tool(
            name="engram_load",
            title="Load project memory",
            description=(
                "Load the project's rules, decisions and conventions relevant to a task, tiered under a token "
                "budget: bodies first, then one-line cards, then omitted ids you can fetch with `id`. "
                "Call it before starting work."
            ),
            input_schema=LOAD_INPUT,
            output_schema=LOAD_OUTPUT,
            annotations={"title": "Load project memory", **READ_ONLY_ANNOTATIONS},
            meta=load_meta,
            handler=handler(lambda args: read_ops.load(store, args)),
        ),
        Tool(
            name="engram_route",
            title="Route a task",
            description="Classify a task (bugfix, feature, test, …) and list the memories it routes to, in load order.",
            input_schema=ROUTE_INPUT,
            output_schema=ROUTE_OUTPUT,
            annotations={"title": "Route a task", **READ_ONLY_ANNOTATIONS},
            handler=handler(lambda args: read_ops.route(store, args)),
        ),
        Tool(
            name="engram_search",
            title="Search memory",
            description="BM25 search over memory titles, tags and bodies; best first, with a snippet of each.",
            input_schema=SEARCH_INPUT,
            output_schema=SEARCH_OUTPUT,
            annotations={"title": "Search memory", **READ_ONLY_ANNOTATIONS},
            handler=handler(lambda args: read_ops.search(store, args)),
        ),
        Tool(
            name="engram_verify",
            title="Verify memory files",
            description="Check every memory file against the hashes engram recorded; report hand edits and gaps.",
            input_schema=NO_ARGUMENTS,
            output_schema=VERIFY_OUTPUT,
            annotations={"title": "Verify memory files", **READ_ONLY_ANNOTATIONS},
            handler=handler(lambda args: read_ops.verify(store)),
        ),
        Tool(
            name="engram_status",
            title="Memory status",
            description="Workspace, counts per scope, role, rule variant, pending proposals and the index hash.",
            input_schema=NO_ARGUMENTS,
            output_schema=STATUS_OUTPUT,
            annotations={"title": "Memory status", **READ_ONLY_ANNOTATIONS},
            handler=handler(lambda args: read_ops.status(store)),
        ),
    )
