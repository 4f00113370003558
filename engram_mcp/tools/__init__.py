"""The complete tool surface. A tool appears here only once its handler is implemented."""

from __future__ import annotations

from engram_mcp.tools import read_tools, write_tools
from engram_mcp.tools.base import Flags
from protocol.spec import Tool
from store.store import Store

WRITE_TOOLS = frozenset(
    {
        "engram_save",
        "engram_save_session",
        "engram_commit",
        "engram_set_role",
        "engram_set_rule_variant",
        "engram_note",
    }
)
"""The write tools: absent from tools/list in read-only mode."""


def build_tools(store: Store, flags: Flags) -> tuple[Tool, ...]:
    return (*read_tools.tools(store, flags), *write_tools.tools(store, flags))
