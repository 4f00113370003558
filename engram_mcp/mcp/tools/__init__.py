"""The complete tool surface: the read and write tools' declarations, bound to a store."""

from __future__ import annotations

from typing import Final

from engram_mcp.mcp.tools import read_tools, write_tools
from engram_mcp.mcp.tools.base import Flags
from protocol.spec import Tool
from store.store import Store

DECLARED: Final = (*read_tools.DECLARED, *write_tools.DECLARED)
WRITE_TOOLS: Final = frozenset(tool.name for tool in DECLARED if tool.writes)
"""The tools whose annotations say they write (readOnlyHint false): absent from tools/list in
read-only mode."""


def build_tools(store: Store, flags: Flags) -> tuple[Tool, ...]:
    tools = (*read_tools.tools(store, flags), *write_tools.tools(store, flags))
    return tuple(tool for tool in tools if not (flags.read_only and tool.name in WRITE_TOOLS))
