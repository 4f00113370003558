"""Wiring: a Store and the server flags become the protocol's ServerSpec."""

from __future__ import annotations

from collections.abc import Callable

from engram_mcp import __version__
from engram_mcp.identity import INSTRUCTIONS, SERVER_NAME
from engram_mcp.outcome import protocol_tool_error
from engram_mcp.prompts import PROMPTS
from engram_mcp.resources import resources
from engram_mcp.tools import WRITE_TOOLS, build_tools
from engram_mcp.tools.base import Flags
from protocol.spec import ServerSpec
from store.store import Store


def unknown_tool(read_only: bool) -> Callable[[str], str]:
    def hint(name: str) -> str:
        if read_only and name in WRITE_TOOLS:
            return f"Unknown tool: {name}: this server runs read-only (--read-only or ENGRAM_READ_ONLY=1)"
        return f"Unknown tool: {name}"

    return hint


def server_spec(
    store: Store,
    flags: Flags,
    *,
    elicitation_timeout: float = 60.0,
    prepare: Callable[[], None] | None = None,
) -> ServerSpec:
    return ServerSpec(
        name=SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=build_tools(store, flags),
        resources=resources(store),
        prompts=PROMPTS,
        tool_error=protocol_tool_error,
        unknown_tool_hint=unknown_tool(flags.read_only),
        state_binding=str(store.workspace),
        elicitation=flags.elicitation,
        elicitation_timeout=elicitation_timeout,
        prepare=prepare or (lambda: None),
    )
