"""The published tool surface: schemas valid, bounds published, outputs true, flags honoured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from engram_mcp.app import INSTRUCTIONS, server_spec
from engram_mcp.tools.base import Flags
from protocol.eras import Era
from protocol.spec import CallContext, ToolResult
from store.store import Store

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


def test_always_load_marks_only_engram_load(workspace: Path) -> None:
    """Spec-mandated: --always-load sets _meta["anthropic/alwaysLoad"] on engram_load."""
    tools = _tools(workspace, always_load=True)
    assert tools["engram_load"].meta == {"anthropic/alwaysLoad": True}
    assert all(not (t.meta or {}).get("anthropic/alwaysLoad") for n, t in tools.items() if n != "engram_load")
    assert _tools(workspace)["engram_load"].meta is None


def test_instructions_fit_in_512_characters() -> None:
    """Spec-mandated: Codex reads only the first 512 characters."""
    assert len(INSTRUCTIONS) <= 512 and "engram_commit" in INSTRUCTIONS and "human" in INSTRUCTIONS
