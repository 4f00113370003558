"""engram_load, engram_route, engram_search, engram_verify, engram_status (SPEC §3, §5)."""

from __future__ import annotations

from typing import Final

from engram_mcp.mcp.schemas import (
    MEMORY_TYPES,
    SCOPES,
    enveloped,
    flag,
    integer,
    memory_id,
    obj,
    records,
    text,
)
from engram_mcp.mcp.tools.base import READ_ONLY_ANNOTATIONS, Declared, Flags, handler
from engram_mcp.ops import read_ops
from protocol.spec import Tool
from store.read.load import DISCLOSURES
from store.store import Store

LOAD_INPUT = obj(
    {
        "query": text(
            "Task or question; empty: the session's load (the whole store when it fits, else routed by the working tree; the first line says why)",
            2000,
        ),
        "id": memory_id("Memory id: load just its body, budget ignored"),
        "budget_tokens": integer("Tokens to spend (1 token = 4 chars)", 100, 32000, 2000),
        "disclosure": {
            "type": "string",
            "enum": list(DISCLOSURES),
            "default": "tiered",
            "description": "tiered: bodies, then cards, then ids; cards, bodies: only that tier",
        },
        "full": flag("Every active memory's body, not only the task's"),
        "explain": flag("Say why each memory was selected"),
        "include_stale": flag("Stale memories (a code ref broken) as bodies, not cards"),
        "objective": text("Session objective: its working notes appear as cards", 500),
    }
)
_ARRAY = {"type": "array"}
LOAD_OUTPUT = enveloped(
    {
        "task_class": {"type": "string"},
        "selected_keys": _ARRAY,
        "body_keys": _ARRAY,
        "card_ids": _ARRAY,
        "omitted_ids": _ARRAY,
        "tokens": {"type": "integer"},
        "reasons": {"type": "object"},
        "memories": records("id", "type", "title", "tier", "tokens"),
        "marks": {"type": "object"},
    }
)
ROUTE_INPUT = obj({"task": text("What you are about to do", 2000, 1)}, ("task",))
ROUTE_OUTPUT = enveloped(
    {"task_class": {"type": "string"}, "entries": records("id", "type", "scope", "score", "reason")}
)
SEARCH_INPUT = obj(
    {
        "query": text("Words to look for", 1000, 1),
        "limit": integer("Most results", 1, 50, 10),
        "types": {
            "type": "array",
            "items": {"type": "string", "enum": list(MEMORY_TYPES)},
            "maxItems": len(MEMORY_TYPES),
            "uniqueItems": True,
        },
        "scope": {"type": "string", "enum": list(SCOPES)},
        "include_notes": flag("Include working notes", True),
        "include_superseded": flag("Include superseded memories"),
    },
    ("query",),
)
SEARCH_OUTPUT = enveloped(
    {
        "entries": records("id", "type", "scope", "score", "title", "snippet"),
        "backends_used": _ARRAY,
        "no_match": {"type": "string"},
    }
)
NO_ARGUMENTS = obj({})


LOAD: Final = Declared(
    name="engram_load",
    title="Load project memory",
    description=(
        "Load the project's rules, decisions and conventions relevant to a task, tiered under a token "
        "budget: bodies first, then one-line cards, then omitted ids you can fetch with `id`. "
        "Call it before starting work."
    ),
    input_schema=LOAD_INPUT,
    output_schema=LOAD_OUTPUT,
    annotations=READ_ONLY_ANNOTATIONS,
)
ROUTE: Final = Declared(
    name="engram_route",
    title="Route a task",
    description=(
        "Classify a task (bugfix, feature, test, …) and list the memories it routes to, in load order, "
        "each with why; no bodies (engram_load reads them)."
    ),
    input_schema=ROUTE_INPUT,
    output_schema=ROUTE_OUTPUT,
    annotations=READ_ONLY_ANNOTATIONS,
)
SEARCH: Final = Declared(
    name="engram_search",
    title="Search memory",
    description=(
        "BM25 search over memory titles, tags and bodies; best first, with a snippet of each, or "
        "no match (and why) when no memory answers. "
        "engram_load with `id` reads one in full."
    ),
    input_schema=SEARCH_INPUT,
    output_schema=SEARCH_OUTPUT,
    annotations=READ_ONLY_ANNOTATIONS,
)
VERIFY: Final = Declared(
    name="engram_verify",
    title="Verify memory files",
    description="Check every memory file against the hashes engram recorded; report hand edits and gaps.",
    input_schema=NO_ARGUMENTS,
    annotations=READ_ONLY_ANNOTATIONS,
)
STATUS: Final = Declared(
    name="engram_status",
    title="Memory status",
    description="Workspace, counts per scope, role, rule variant, pending proposals and the index hash.",
    input_schema=NO_ARGUMENTS,
    annotations=READ_ONLY_ANNOTATIONS,
)
DECLARED: Final = (LOAD, ROUTE, SEARCH, VERIFY, STATUS)


def tools(store: Store, flags: Flags) -> tuple[Tool, ...]:
    """The read tools bound to `store`, each to the engram_mcp.ops.read_ops function it runs."""
    return (
        LOAD.bound(
            handler(lambda args: read_ops.load(store, args)),
            meta={"anthropic/alwaysLoad": True} if flags.always_load else None,
        ),
        ROUTE.bound(handler(lambda args: read_ops.route(store, args))),
        SEARCH.bound(handler(lambda args: read_ops.search(store, args))),
        VERIFY.bound(handler(lambda args: read_ops.verify(store))),
        STATUS.bound(handler(lambda args: read_ops.status(store))),
    )
