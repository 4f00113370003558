"""Which of engram's tools a host may run unasked, and the names each host gives them (SPEC §4.2, §8).

The rest, and why: docs/design.md, `engram_mcp/hosts/gate/gate.py`.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Final

SERVER: Final = "engram"
COMMIT_TOOL: Final = "engram_commit"
READ_TOOLS: Final = ("engram_load", "engram_route", "engram_search", "engram_status", "engram_verify")


def opencode_name(tool: str, server: str = SERVER) -> str:
    """opencode registers an MCP tool as `<server>_<tool>`."""
    return f"{server}_{tool}"


def gemini_name(tool: str, server: str = SERVER) -> str:
    """Gemini CLI's fully qualified name of an MCP tool, `mcp_<server>_<tool>`."""
    return f"mcp_{server}_{tool}"


def claude_name(tool: str, server: str = SERVER) -> str:
    """Claude Code's permission-rule name of an MCP tool, `mcp__<server>__<tool>`."""
    return f"mcp__{server}__{tool}"


GEMINI_ALLOWED: Final = tuple(gemini_name(tool) for tool in READ_TOOLS)
"""What older `engram link gemini` added to `tools.allowed` (deprecated in Gemini CLI 0.61); a link
now takes them out again (gate_rules.py) and writes a policy file instead (shell_rules.py)."""
OPENCODE_RULE: Final = (opencode_name(COMMIT_TOOL), "ask")
"""The `permission` member `engram link opencode` adds: opencode otherwise runs every tool unasked."""


# --- does a host rule cover the commit tool? (each host's own matching) ---------------------------
def claude_rule_covers(rule: str, server: str = SERVER) -> bool:
    """Whether a Claude Code permission rule allows engram_commit (`*` only after `mcp__<server>__`)."""
    rule = rule.strip()
    if rule in (f"mcp__{server}", f"mcp__{server}__*"):
        return True
    return rule.startswith(f"mcp__{server}__") and fnmatch.fnmatchcase(claude_name(COMMIT_TOOL, server), rule)


def opencode_decision(permission: Any, tool: str) -> tuple[str | None, str]:
    """(decision, rule) of a `permission` value for `tool`: the last matching key wins; None when
    no rule matches. An object value (patterns over the tool's input) counts as its `*` action,
    or allow when any of its patterns allows."""
    if isinstance(permission, str):
        return permission, f'"permission": "{permission}"'
    decision: str | None = None
    rule = ""
    for pattern, action in (permission if isinstance(permission, dict) else {}).items():
        if not fnmatch.fnmatchcase(tool, pattern.replace("[", "[[]")):
            continue
        if isinstance(action, dict):
            values = [a for a in action.values() if isinstance(a, str)]
            action = (
                action.get("*")
                if isinstance(action.get("*"), str)
                else ("allow" if "allow" in values else "ask")
            )
        if isinstance(action, str):
            decision, rule = action, f'"{pattern}": "{action}"'
    return decision, rule


def gemini_covers(pattern: str, server: str = SERVER) -> bool:
    """Whether a `tools.allowed` entry allows the commit tool (Gemini's exact and wildcard forms)."""
    name = re.sub(r"\(.*\)$", "", pattern.strip())
    return name in ("*", "mcp_*", f"mcp_{server}_*", gemini_name(COMMIT_TOOL, server))
