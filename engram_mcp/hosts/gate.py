"""Which of engram's tools a host may run unasked, and the names each host gives them (SPEC §4.2, §8).

The human gate is the host's permission prompt on `engram_commit`. `engram link` writes, where
the host has per-tool rules, "ask" for the commit tool and "allow" for the read tools, so that
headless runs (`codex exec`, `gemini -p`, `opencode run`) can search and load while a commit
still needs a human. Nothing engram writes ever auto-approves `engram_commit`.

`READ_TOOLS` is the one list of tools that may run unasked. A tool is on it when it writes
nothing durable: it reads memory files, derived indexes and settings, and at most rebuilds a
derived file. Left off, and so left to the host's default (which asks in every host engram
configures):

* `engram_commit` — writes approved memories: the gate itself.
* `engram_save`, `engram_save_session`, `engram_note` — with a client that supports the
  approval dialog (§4.3) they write memory once the human accepts there; a host that answers
  the dialog on its own must not be told to run them unasked.
* `engram_set_role`, `engram_set_rule_variant` — change settings that steer every later load.
"""

from __future__ import annotations

from typing import Final

SERVER: Final = "engram"
COMMIT_TOOL: Final = "engram_commit"
READ_TOOLS: Final = ("engram_load", "engram_route", "engram_search", "engram_status", "engram_verify")


def opencode_name(tool: str) -> str:
    """opencode registers an MCP tool as `<server>_<tool>`."""
    return f"{SERVER}_{tool}"


def gemini_name(tool: str) -> str:
    """Gemini CLI's fully qualified name of an MCP tool, `mcp_<server>_<tool>`."""
    return f"mcp_{SERVER}_{tool}"


def claude_name(tool: str) -> str:
    """Claude Code's permission-rule name of an MCP tool, `mcp__<server>__<tool>`."""
    return f"mcp__{SERVER}__{tool}"


GEMINI_ALLOWED: Final = tuple(gemini_name(tool) for tool in READ_TOOLS)
"""What `engram link gemini` adds to `tools.allowed`: the read tools, never the commit tool."""
OPENCODE_RULE: Final = (opencode_name(COMMIT_TOOL), "ask")
"""The `permission` member `engram link opencode` adds: opencode otherwise runs every tool unasked."""
