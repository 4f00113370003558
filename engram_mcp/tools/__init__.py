"""The complete tool surface. A tool appears here only once its handler is implemented."""

from __future__ import annotations

from engram_mcp.tools import reads
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
"""Names reserved for the write path; absent in read-only mode (and until implemented)."""


def build_tools(store: Store, flags: Flags) -> tuple[Tool, ...]:
    return (*reads.tools(store, flags),)
