"""engram's tools called in this process, without a session: the handler a `tools/call` reaches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram_mcp.mcp.app import server_spec
from engram_mcp.mcp.tools.base import Flags
from protocol.eras import Era
from protocol.spec import CallContext, ElicitAnswer, Tool, ToolResult
from store.store import Store


def run_tool(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Call a tool's handler in-process, as a legacy client without elicitation would: every
    question the handler asks is answered `unavailable` (the token path)."""
    context = CallContext(era=Era.LEGACY, version="2025-11-25", client_capabilities={})
    result = tool.handler(arguments, context)
    if not isinstance(result, ToolResult):
        try:
            next(result)
            while True:
                result.send(ElicitAnswer("unavailable"))
        except StopIteration as stop:
            result = stop.value
    assert isinstance(result, ToolResult)
    return result


def call_tool(workspace: Path, name: str, arguments: dict[str, Any]) -> ToolResult:
    """The tool `name` of a server on `workspace` with elicitation off, called once."""
    store = Store(workspace)
    try:
        tools = {t.name: t for t in server_spec(store, Flags(elicitation=False)).tools}
        return run_tool(tools[name], arguments)
    finally:
        store.close()
