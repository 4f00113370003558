"""`engram doctor`'s gate audit: every host setting that lets `engram_commit` run unasked (SPEC §8).

The rest, and why: docs/design.md, `engram_mcp/hosts/gate/audit.py`.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from engram_mcp.hosts.doctor.findings import (
    INFORMATIONAL,
    Finding,
    Where,
    gemini_policy_rules,
    read_jsonc,
    read_toml,
)
from engram_mcp.hosts.formats import opencode_config
from engram_mcp.hosts.gate.gate import (
    COMMIT_TOOL,
    SERVER,
    claude_rule_covers,
    gemini_covers,
    opencode_decision,
    opencode_name,
)
from engram_mcp.hosts.gate.shell_audit import shell_audit
from engram_mcp.hosts.link.servers import entry_runs_engram, server_names
from engram_mcp.hosts.targets import codex_home

GATE_OPEN = "host.gate_open"


def _codex_fix(name: str) -> str:
    return f'set {COMMIT_TOOL} = {{ approval_mode = "prompt" }} under [mcp_servers.{name}.tools]'


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


# --- Codex ----------------------------------------------------------------------------------------
def codex_mode(entry: Mapping[str, Any], name: str = SERVER) -> tuple[str, str]:
    """(effective approval mode of the commit tool, the setting it comes from)."""
    tool = _dict(_dict(entry.get("tools")).get(COMMIT_TOOL))
    if isinstance(tool.get("approval_mode"), str):
        mode = tool["approval_mode"]
        return mode, f'[mcp_servers.{name}.tools] {COMMIT_TOOL} approval_mode = "{mode}"'
    default = entry.get("default_tools_approval_mode")
    if isinstance(default, str):
        return default, f'[mcp_servers.{name}] default_tools_approval_mode = "{default}"'
    return "auto", f"no approval_mode for {COMMIT_TOOL} (Codex's default is auto)"


def _codex(where: Where) -> Iterator[Finding]:
    for path in (codex_home(where.env) / "config.toml", where.workspace / ".codex" / "config.toml"):
        servers = _dict(read_toml(path).get("mcp_servers"))
        for name, entry in servers.items():
            if not isinstance(entry, dict) or not entry_runs_engram("codex", entry):
                continue
            mode, setting = codex_mode(entry, name)
            if mode != "prompt":
                yield Finding(
                    GATE_OPEN,
                    where.show(path),
                    f"Codex runs {name}'s {COMMIT_TOOL} without asking: {setting}",
                    f"{_codex_fix(name)} (in Codex, approve means approved without asking)",
                    setting,
                )


# --- Claude Code ----------------------------------------------------------------------------------
def _claude(where: Where) -> Iterator[Finding]:
    names = server_names(where, "claude")

    def covers(rule: str) -> bool:
        return any(claude_rule_covers(rule, name) for name in names)

    for path in where.claude_settings():
        permissions = _dict(_dict(read_jsonc(path)).get("permissions"))
        for rule in _strings(permissions.get("allow")):
            if covers(rule):
                yield Finding(
                    GATE_OPEN,
                    where.show(path),
                    f"the allow rule {rule!r} lets Claude Code run {COMMIT_TOOL} without a prompt",
                    f"remove {rule!r} from permissions.allow (allow engram's read tools by name instead)",
                    f'permissions.allow "{rule}"',
                )
        mode = permissions.get("defaultMode")
        if mode in ("bypassPermissions", "auto"):
            # both run every tool and shell command with no human prompt (auto lets a classifier
            # decide instead): engram_commit and `engram commit` alike
            yield Finding(
                GATE_OPEN,
                where.show(path),
                f"{mode} lets Claude Code run {COMMIT_TOOL} and shell commands such as "
                "`engram commit` without a prompt",
                f'remove "defaultMode": "{mode}" from permissions',
                f'permissions.defaultMode "{mode}"',
            )
    state = _dict(read_jsonc(where.claude_json()))
    for key in where.project_keys():
        for rule in _strings(_dict(_dict(state.get("projects")).get(key)).get("allowedTools")):
            if covers(rule):
                yield Finding(
                    GATE_OPEN,
                    where.show(where.claude_json()),
                    f"this project's allowedTools {rule!r} lets Claude Code run {COMMIT_TOOL} without a prompt",
                    f'remove {rule!r} from projects["{key}"].allowedTools (or run /permissions in claude)',
                    f'projects["{key}"].allowedTools "{rule}"',
                )


# --- opencode -------------------------------------------------------------------------------------
def opencode_linked(where: Where) -> list[tuple[Path, str]]:
    """(config file, server name) of every opencode entry that runs this engram."""
    found = []
    for path in opencode_config.config_files(where):
        for name, entry in _dict(_dict(read_jsonc(path)).get("mcp")).items():
            if entry_runs_engram("opencode", entry):
                found.append((path, name))
    return found


def _opencode(where: Where) -> Iterator[Finding]:
    linked = opencode_linked(where)
    names = list(dict.fromkeys([SERVER, *(name for _, name in linked)]))
    for name in names:
        tool = opencode_name(COMMIT_TOOL, name)
        ruled = False
        for rules in opencode_config.rules(where):
            decision, rule = opencode_decision(rules.permission, tool)
            ruled = ruled or (decision is not None and rules.top_level)
            if decision != "allow":
                continue
            label = rules.label
            string = isinstance(rules.permission, str)
            setting = rule if string else f"{label} {rule}"
            fix = (
                f'replace it with {{"*": "allow", "{tool}": "ask", "bash": {{"*": "allow", "engram *": "ask"}}}}'
                if string
                else f'make the last {label} rule matching {tool} "ask": add "{tool}": "ask" after {rule}'
            )
            yield Finding(
                GATE_OPEN,
                where.show(rules.path),
                f"opencode runs {tool} without asking ({setting})",
                fix,
                setting,
            )
        mine = [path for path, server in linked if server == name]
        if mine and not ruled:
            yield Finding(
                GATE_OPEN,
                where.show(mine[0]),
                f"no permission rule for {tool}: opencode's default agent runs it without asking",
                f'add "permission": {{"{tool}": "ask"}}'
                + (" (`engram link opencode` writes it)" if name == SERVER else ""),
                f"no permission rule for {tool}",
            )


# --- Gemini CLI -----------------------------------------------------------------------------------
def _gemini_settings(where: Where, path: Path, names: tuple[str, ...]) -> Iterator[Finding]:
    settings = _dict(read_jsonc(path))
    shown = where.show(path)
    for name in names:
        if _dict(_dict(settings.get("mcpServers")).get(name)).get("trust") is True:
            yield Finding(
                GATE_OPEN,
                shown,
                f"mcpServers.{name} sets trust: true, which skips the approval prompt for {COMMIT_TOOL}",
                f'remove `"trust": true` from mcpServers.{name} in {shown}',
                f"mcpServers.{name}.trust true",
            )
    for pattern in _strings(_dict(settings.get("tools")).get("allowed")):
        if any(gemini_covers(pattern, name) for name in names):
            yield Finding(
                GATE_OPEN,
                shown,
                f"tools.allowed {pattern!r} lets Gemini CLI run {COMMIT_TOOL} without asking",
                f"remove {pattern!r} from tools.allowed; list engram's read tools by name",
                f'tools.allowed "{pattern}"',
            )
    mcp = _dict(settings.get("mcp"))
    for name in _strings(mcp.get("allowed")):
        if name in (*names, "*"):
            yield Finding(
                GATE_OPEN,
                shown,
                f"mcp.allowed {name!r} lets Gemini CLI run every engram tool, {COMMIT_TOOL} included, unasked",
                f"remove {name!r} from mcp.allowed",
                f'mcp.allowed "{name}"',
            )
    if mcp.get("autoAllowInHeadless") is True:
        yield Finding(
            GATE_OPEN,
            shown,
            f"mcp.autoAllowInHeadless lets `gemini -p` run {COMMIT_TOOL} unasked",
            "remove mcp.autoAllowInHeadless (engram's read tools are already allowed by name)",
            "mcp.autoAllowInHeadless true",
        )


def _policy_covers(rule: Mapping[str, Any], server: str) -> bool:
    if rule.get("decision") != "allow":
        return False
    mcp_name = rule.get("mcpName")
    if mcp_name not in (None, server, "*"):
        return False
    names = rule.get("toolName")
    tools = _strings(names) if isinstance(names, list) else [names] if isinstance(names, str) else []
    if not tools:
        return mcp_name is not None
    return any(gemini_covers(t, server) or (mcp_name is not None and t in ("*", COMMIT_TOOL)) for t in tools)


def _gemini(where: Where) -> Iterator[Finding]:
    names = server_names(where, "gemini")
    for path in (where.home / ".gemini" / "settings.json", where.workspace / ".gemini" / "settings.json"):
        yield from _gemini_settings(where, path, names)
    for path, n, rule in gemini_policy_rules(where.home):
        if any(_policy_covers(rule, name) for name in names):
            yield Finding(
                GATE_OPEN,
                where.show(path),
                f"policy rule #{n} allows {COMMIT_TOOL} without asking",
                f'make rule #{n} name engram\'s read tools only, or change its decision to "ask_user"',
                f'[[rule]] #{n} decision = "allow"',
            )


# --- Cursor, VS Code ------------------------------------------------------------------------------
def _cursor(where: Where) -> Iterator[Finding]:
    targets = [f"{name}:{COMMIT_TOOL}" for name in server_names(where, "cursor")]
    for folder in (where.home / ".cursor", where.workspace / ".cursor"):
        path = folder / "permissions.json"
        for pattern in _strings(_dict(read_jsonc(path)).get("mcpAllowlist")):
            if any(fnmatch.fnmatchcase(target, pattern) for target in targets):
                yield Finding(
                    GATE_OPEN,
                    where.show(path),
                    f"mcpAllowlist {pattern!r} lets Cursor run {COMMIT_TOOL} without asking",
                    f"remove {pattern!r} from mcpAllowlist; list engram's read tools by name",
                    f'mcpAllowlist "{pattern}"',
                )
    for path in (where.home / ".cursor" / "cli-config.json", where.workspace / ".cursor" / "cli.json"):
        for rule in _strings(_dict(_dict(read_jsonc(path)).get("permissions")).get("allow")):
            inner = re.fullmatch(r"Mcp\((.*)\)", rule.strip())
            if inner and any(fnmatch.fnmatchcase(target, inner.group(1)) for target in targets):
                yield Finding(
                    GATE_OPEN,
                    where.show(path),
                    f"the Cursor CLI rule {rule!r} runs {COMMIT_TOOL} without asking",
                    f"remove {rule!r} from permissions.allow",
                    f'permissions.allow "{rule}"',
                )


def _vscode(where: Where) -> Iterator[Finding]:
    for path, settings in where.vscode_settings():
        for key in ("chat.tools.global.autoApprove", "chat.tools.autoApprove"):
            if settings.get(key) is True:
                yield Finding(
                    GATE_OPEN,
                    where.show(path),
                    f"{key} approves every tool call, {COMMIT_TOOL} included",
                    f"remove {key} (approve engram's read tools one by one instead)",
                    f"{key} true",
                )


def audit(workspace: Path, env: Mapping[str, str] = os.environ) -> tuple[list[Finding], list[Finding]]:
    """(every setting, in every host file engram knows, that lets engram_commit or engram's CLI
    write commands run unasked; informational notes about shells that are ungated by default)."""
    where = Where(workspace, env)
    found = [f for check in (_codex, _claude, _opencode, _gemini, _cursor, _vscode) for f in check(where)]
    linked = opencode_linked(where)
    shell, ungated = shell_audit(where, opencode_linked=linked[0][0] if linked else None)
    failing = [f for f in found + shell + ungated if f.code not in INFORMATIONAL]
    notes = [f for f in shell + ungated if f.code in INFORMATIONAL]  # host.shell_open
    return failing, notes  # a shell that runs engram's writes unasked fails doctor
