"""Each host's own rule matching, written from its documentation and source, to check what
`engram link` writes against the host rather than against engram's idea of it: Claude Code's
`Bash(…)` rules, opencode's `permission` keys, Gemini CLI's settings and policy engine."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path
from typing import Any


def claude_bash_allows(rule: str, command: str) -> bool:
    """Claude Code's Bash rule matching: `Bash`, `Bash(prefix:*)`, `Bash(glob with *)`, exact."""
    if rule == "Bash":
        return True
    if not (rule.startswith("Bash(") and rule.endswith(")")):
        return False
    spec = rule[5:-1]
    if spec.endswith(":*"):
        return command == spec[:-2] or command.startswith(spec[:-2] + " ")
    if "*" in spec:
        return fnmatch.fnmatchcase(command, spec) or (spec.endswith(" *") and command == spec[:-2])
    return command == spec


def opencode_decision(config: dict[str, Any], tool: str) -> str:
    """opencode's rule: the last `permission` key whose wildcard matches the tool wins; default allow."""
    permission = config.get("permission", {})
    if isinstance(permission, str):
        return permission
    decision = "allow"
    for pattern, action in permission.items():
        if fnmatch.fnmatchcase(tool, pattern) and isinstance(action, str):
            decision = action
    return decision


def opencode_bash_decision(config: dict[str, Any], command: str) -> str:
    """opencode's bash rule: the last matching pattern of every `permission` key matching "bash"
    wins (`*` any text, a trailing " *" may match nothing); no rule: opencode's default allow."""
    permission = config.get("permission", {})
    if isinstance(permission, str):
        return permission
    decision = "allow"
    for key, value in permission.items():
        if not fnmatch.fnmatchcase("bash", key):
            continue
        rules = value if isinstance(value, dict) else {"*": value}
        for pattern, action in rules.items():
            regex = ".*".join(re.escape(part) for part in pattern.split("*"))
            if pattern.endswith(" *"):
                regex = regex[: -len(re.escape(" ") + ".*")] + "(?: .*)?"
            if re.fullmatch(regex, command, re.DOTALL):
                decision = action
    return decision


def gemini_allowed(config: dict[str, Any], fqn: str) -> bool:
    """Gemini CLI's settings rules that allow a tool unasked (policy/config.ts, policy-engine.ts)."""
    server = config.get("mcpServers", {}).get("engram", {})
    if server.get("trust") is True:
        return True
    mcp = config.get("mcp", {})
    if any(name in ("engram", "*") for name in mcp.get("allowed", [])):
        return True
    for pattern in config.get("tools", {}).get("allowed", []):
        name = re.sub(r"\(.*\)$", "", pattern)
        if name in ("*", "mcp_*", "mcp_engram_*", fqn):
            return True
    return False


def gemini_policy(home: Path) -> list[dict[str, Any]]:
    path = home / ".gemini" / "policies" / "engram.toml"
    return list(tomllib.loads(path.read_text("utf-8"))["rule"])


def gemini_policy_decision(rules: list[dict[str, Any]], tool: str, command: str | None = None) -> str | None:
    """Gemini CLI's policy engine for one call: the matching rule with the highest priority."""
    best: tuple[int, str] | None = None
    for rule in rules:
        names = rule["toolName"] if isinstance(rule["toolName"], list) else [rule["toolName"]]
        if rule.get("mcpName"):
            names = [f"mcp_{rule['mcpName']}_{name}" for name in names]
        if tool not in names:
            continue
        if command is not None:
            prefixes = rule.get("commandPrefix")
            prefixes = [prefixes] if isinstance(prefixes, str) else prefixes
            if prefixes and not any(command == p or command.startswith(p + " ") for p in prefixes):
                continue
            if "commandRegex" in rule and not re.match(rule["commandRegex"], command):
                continue
        if best is None or rule["priority"] > best[0]:
            best = (rule["priority"], rule["decision"])
    return best[1] if best else None
