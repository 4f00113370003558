"""The published tool surface: schemas valid, bounds published, outputs true, flags honoured,
and the context bill of being installed kept small."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from engram_mcp.mcp.app import INSTRUCTIONS, server_spec
from engram_mcp.mcp.tools import WRITE_TOOLS as DERIVED_WRITE_TOOLS
from engram_mcp.mcp.tools.base import Flags
from protocol.eras import Era
from protocol.loop import Server
from protocol.spec import CallContext, ToolResult
from store.store import Store
from tests.support.tools import call_tool
from tests.support.wire import MODERN_META

READ_TOOLS = ["engram_load", "engram_route", "engram_search", "engram_verify", "engram_status"]
CALLS: dict[str, dict[str, Any]] = {
    "engram_load": {"query": "fix a flaky test", "explain": True},
    "engram_route": {"task": "release a new version"},
    "engram_search": {"query": "migration"},
    "engram_verify": {},
    "engram_status": {},
}


def _tools(workspace: Path, **flags: bool) -> dict[str, Any]:
    return {t.name: t for t in server_spec(Store(workspace), Flags(**flags)).tools}


WRITE_TOOLS = [
    "engram_save",
    "engram_save_session",
    "engram_commit",
    "engram_note",
    "engram_set_role",
    "engram_set_rule_variant",
]


def test_all_eleven_tools_are_listed_and_read_only_mode_drops_the_writers(workspace: Path) -> None:
    """Spec-mandated: eleven tools; with --read-only the writing tools are not listed at all."""
    assert sorted(_tools(workspace)) == sorted(READ_TOOLS + WRITE_TOOLS)
    assert sorted(_tools(workspace, read_only=True)) == sorted(READ_TOOLS)


def test_commit_demands_the_human_and_writers_are_not_read_only(workspace: Path) -> None:
    """Spec-mandated annotations: engram_commit is destructive and requires user interaction."""
    tools = _tools(workspace)
    commit = tools["engram_commit"]
    assert commit.meta == {"anthropic/requiresUserInteraction": True}
    assert commit.annotations["destructiveHint"] is True
    assert all(tools[name].annotations["readOnlyHint"] is False for name in WRITE_TOOLS)
    assert tools["engram_save"].annotations["destructiveHint"] is False
    assert tools["engram_set_role"].annotations["idempotentHint"] is True
    assert "destructiveHint" not in tools["engram_note"].annotations


@pytest.mark.parametrize("name", WRITE_TOOLS)
def test_write_tool_schemas_are_valid_and_closed(workspace: Path, name: str) -> None:
    """Spec-mandated: every write tool publishes valid, closed schemas."""
    tool = _tools(workspace)[name]
    Draft202012Validator.check_schema(tool.input_schema)
    Draft202012Validator.check_schema(tool.output_schema)
    assert tool.input_schema["additionalProperties"] is False


@pytest.mark.parametrize("name", READ_TOOLS)
def test_schemas_are_valid_and_bounded(workspace: Path, name: str) -> None:
    """Spec-mandated: every bound published; unknown arguments refused by the schema."""
    tool = _tools(workspace)[name]
    Draft202012Validator.check_schema(tool.input_schema)
    Draft202012Validator.check_schema(tool.output_schema)
    assert tool.input_schema["additionalProperties"] is False
    for prop in tool.input_schema["properties"].values():
        if prop["type"] == "string":
            assert "maxLength" in prop or "enum" in prop
        if prop["type"] == "integer":
            assert "minimum" in prop and "maximum" in prop
        if prop["type"] == "array":
            assert "maxItems" in prop
    assert tool.annotations["readOnlyHint"] is True


@pytest.mark.parametrize("name", READ_TOOLS)
def test_structured_content_satisfies_the_output_schema(workspace: Path, name: str) -> None:
    """Spec-mandated: clients validate structuredContent against outputSchema."""
    tool = _tools(workspace)[name]
    context = CallContext(era=Era.LEGACY, version="2025-11-25", client_capabilities={})
    result = tool.handler(CALLS[name], context)
    assert isinstance(result, ToolResult) and not result.is_error
    Draft202012Validator(tool.output_schema).validate(result.structured)
    assert result.structured["contract_version"] == 1 and result.structured["ok"] is True
    data = result.structured["data"]
    assert set(DATA_KEYS[name]) <= set(data), (name, sorted(data))
    for row in data.get("entries", ()):
        assert set(ENTRY_KEYS[name]) <= set(row), (name, row)


DATA_KEYS = {
    "engram_load": ("selected_keys", "body_keys", "card_ids", "omitted_ids", "tokens", "memories"),
    "engram_route": ("task_class", "entries"),
    "engram_search": ("entries", "backends_used"),
    "engram_verify": ("ok", "checked", "mismatched", "missing", "unindexed", "pending"),
    "engram_status": ("workspace", "counts", "role", "rule_variant", "pending_proposals", "index"),
}
"""SPEC §5's `data` keys: most output schemas publish only the envelope, so this pins the rest."""
ENTRY_KEYS = {
    "engram_route": ("id", "type", "scope", "score", "reason"),
    "engram_search": ("id", "type", "scope", "score", "title", "snippet"),
}
_CANDIDATE = {"type": "rule", "title": "Run the linter before pushing", "body": "Always run make lint first."}
WRITE_CALLS: tuple[tuple[str, dict[str, Any], tuple[str, ...]], ...] = (
    (
        "engram_save",
        {"candidates": [_CANDIDATE]},
        ("approval_token", "expires_at", "candidates", "redactions"),
    ),
    ("engram_commit", {"approve": "all"}, ("written", "deferred")),
    ("engram_save_session", {"text": "We decided: always pin the lock file."}, ("candidates", "redactions")),
    ("engram_note", {"text": "The parser drops the last line"}, ("approval_token",)),
    ("engram_set_role", {"role": "reviewer"}, ("previous", "current")),
    ("engram_set_rule_variant", {"mode": "base"}, ("previous", "current")),
)
"""Each write tool on the token path (no dialog), in an order where each call can succeed (commit
takes the save's token), with the `data` keys SPEC §5 gives its success."""


def test_write_tools_answer_with_the_data_keys_of_their_contract(workspace: Path) -> None:
    """Spec-mandated (SPEC §5 table): the envelope schema no longer pins `data`, this does."""
    tools = _tools(workspace)
    token = None
    for name, arguments, keys in WRITE_CALLS:
        if name == "engram_commit":
            arguments = {**arguments, "approval_token": token}
        result = call_tool(workspace, name, arguments)
        assert not result.is_error, (name, result.structured)
        Draft202012Validator(tools[name].output_schema).validate(result.structured)
        data = result.structured["data"]
        assert set(keys) <= set(data), (name, sorted(data))
        token = data.get("approval_token", token)


READ_WRITE = Flags()
BILL = 11_500
"""The most characters tools/list may cost a session (issue 20): hosts put all of it, output
schemas included, in the model's context in every session. Measured as compact JSON, the way a
host that re-serialises the listing counts it."""


def _listing(workspace: Path, request: dict[str, Any], flags: Flags = READ_WRITE) -> dict[str, Any]:
    """The tools/list result a client of a server with `flags` gets, after `request`'s handshake."""
    store = Store(workspace, read_only=flags.read_only)
    out = io.BytesIO()
    lines = [orjson.dumps(m) for m in (*_handshake(request), request)]
    try:
        Server(server_spec(store, flags), concurrent=False).serve(io.BytesIO(b"\n".join(lines) + b"\n"), out)
    finally:
        store.close()
    reply = orjson.loads(out.getvalue().splitlines()[-1])
    assert reply["id"] == "list", reply
    result: dict[str, Any] = reply["result"]
    return result


def _handshake(request: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    if "_meta" in request.get("params", {}):
        return ()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return (
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    )


@pytest.mark.parametrize(
    "params",
    [{}, {"_meta": MODERN_META}],
    ids=["legacy-2025-11-25", "modern"],
)
def test_the_tool_listing_costs_at_most_11500_characters(workspace: Path, params: dict[str, Any]) -> None:
    """engram's own choice (issue 20): all eleven tools, titles, annotations and output schemas
    included, in at most 11,500 characters of compact JSON."""
    result = _listing(workspace, {"jsonrpc": "2.0", "id": "list", "method": "tools/list", "params": params})
    assert len(result["tools"]) == 11
    assert all("outputSchema" in tool and "title" in tool for tool in result["tools"])
    size = len(json.dumps(result, separators=(",", ":")))
    assert size <= BILL, f"tools/list is {size} characters, over the {BILL} the context bill allows"


def test_always_load_marks_only_engram_load(workspace: Path) -> None:
    """Spec-mandated: --always-load sets _meta["anthropic/alwaysLoad"] on engram_load."""
    tools = _tools(workspace, always_load=True)
    assert tools["engram_load"].meta == {"anthropic/alwaysLoad": True}
    assert all(not (t.meta or {}).get("anthropic/alwaysLoad") for n, t in tools.items() if n != "engram_load")
    assert _tools(workspace)["engram_load"].meta is None


def test_instructions_fit_in_512_characters() -> None:
    """Spec-mandated: Codex reads only the first 512 characters."""
    assert len(INSTRUCTIONS) <= 512 and "engram_commit" in INSTRUCTIONS and "human" in INSTRUCTIONS


def test_read_only_mode_lists_exactly_the_tools_annotated_read_only(workspace: Path) -> None:
    """Spec-mandated (SPEC §5): with --read-only every tool whose annotations say it writes
    (readOnlyHint false) is absent from tools/list and every read tool is there; WRITE_TOOLS is
    derived from those annotations, not kept by hand."""
    request = {"jsonrpc": "2.0", "id": "list", "method": "tools/list", "params": {}}
    everything = {tool["name"]: tool for tool in _listing(workspace, request)["tools"]}
    writers = {name for name, tool in everything.items() if tool["annotations"]["readOnlyHint"] is False}
    readers = {name for name, tool in everything.items() if tool["annotations"]["readOnlyHint"] is True}
    assert writers == set(WRITE_TOOLS) == set(DERIVED_WRITE_TOOLS) and readers == set(READ_TOOLS)
    listed = {tool["name"] for tool in _listing(workspace, request, Flags(read_only=True))["tools"]}
    assert listed == readers
