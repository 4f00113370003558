"""Wiring: a Store and the server flags become the protocol's ServerSpec.

`engram-mcp` (engram_mcp.mcp.server) imports this module after its first reply, at one seam: it
holds everything the served application needs (the tools, the ops, the store), so the
handshake never waits for them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from engram_mcp import __version__
from engram_mcp.mcp.identity import INSTRUCTIONS, SERVER_NAME
from engram_mcp.mcp.prompts import PROMPTS
from engram_mcp.mcp.resources import resources
from engram_mcp.mcp.tools import WRITE_TOOLS, build_tools
from engram_mcp.mcp.tools.base import Flags
from engram_mcp.ops.outcome import protocol_tool_error
from protocol.spec import ServerSpec
from store.errors import StoreError
from store.store import Store
from store.write import transaction

log = logging.getLogger("engram")


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


def open_store(workspace: Path, *, read_only: bool, started_by_shell: str) -> Store:
    """The store `engram-mcp` serves, its journals recovered (a recovery that fails is logged;
    the server still serves). `started_by_shell`: why the process looks started by an agent
    rather than its host (engram_mcp.ops.agent_shell), or empty."""
    store = Store(workspace, read_only=read_only)
    if started_by_shell:  # SPEC §7: an agent that starts the server is its client
        store.agent_shell = True
        log.warning(
            "not started by a host (%s): writes are recorded as made from an agent's shell "
            "and `engram verify` lists them for review",
            started_by_shell,
        )
    try:
        transaction.recover(store)
    except StoreError as exc:  # noted; the server still serves
        log.warning("%s: %s", exc.code, exc.message)
    return store


def served_spec(
    store: Store,
    *,
    read_only: bool,
    elicitation: bool,
    always_load: bool,
    elicitation_timeout: float,
    prepare: Callable[[], None],
) -> ServerSpec:
    """The spec `engram-mcp` serves on `store`, from its command-line flags."""
    flags = Flags(always_load=always_load, elicitation=elicitation, read_only=read_only)
    return server_spec(store, flags, elicitation_timeout=elicitation_timeout, prepare=prepare)
