"""`engram doctor`'s audit of the shell door to the gate (review H1, SPEC §7, §8).

The rest, and why: docs/design.md, `engram_mcp/hosts/gate/shell_audit.py`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from engram_mcp.hosts.doctor.findings import Finding, Where, gemini_policy_rules, read_jsonc, read_toml
from engram_mcp.hosts.formats import opencode_config
from engram_mcp.hosts.gate import shell_rules
from engram_mcp.hosts.gate.gate import gemini_covers
from engram_mcp.hosts.link import rule_files
from engram_mcp.hosts.link.servers import entry_runs_engram
from engram_mcp.hosts.link.steps import codex_trusted
from engram_mcp.hosts.targets import codex_home

GATE_OPEN = "host.gate_open"
SHELL_UNGATED: Final = "host.shell_ungated"
SHELL_OPEN: Final = "host.shell_open"
"""Informational: engram's rule asks before engram's own commands, but the host runs every
other shell command unasked, so an agent that hides engram's name (a variable, base64, a
script, a client of engram-mcp of its own) still writes memory; engram cannot tell that write
from the human's (SECURITY.md, "The agent's shell"). Only the host asking first closes it."""
_OPEN_SHELL: Final = (
    "an agent that hides engram's name from the rule (a variable, base64, a script of its own) "
    "can still write memory, and engram cannot tell that write from yours"
)
COMMANDS: Final = ("engram commit TOKEN --approve all", "engram save-session --force")
"""The CLI write commands an agent could run to write memory without the human."""
_WHAT = "`engram commit` / `engram save-session --force`"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _prefix(prefix: str, command: str) -> bool:
    prefix = prefix.strip()
    return command == prefix or command.startswith(prefix + " ")


def _wildcard(pattern: str, command: str) -> bool:
    """`*` matches any text (spaces included); a single trailing ` *` may match nothing."""
    if pattern.count("*") == 1 and pattern.endswith(" *") and command == pattern[:-2]:
        return True
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, command, re.DOTALL) is not None


# --- Claude Code ----------------------------------------------------------------------------------
def claude_bash_covers(rule: str, command: str) -> bool:
    """Whether a Claude Code permission rule matches the shell command (Claude's rule syntax)."""
    rule = rule.strip()
    if rule == "Bash":
        return True
    match = re.fullmatch(r"Bash\((.*)\)", rule, re.DOTALL)
    if match is None:
        return False
    spec = match.group(1).strip()
    if spec.endswith(":*"):
        return _prefix(spec[:-2], command)
    if "*" in spec:
        return _wildcard(spec, command)
    return command == spec


def _claude(where: Where) -> Iterator[Finding]:
    allowed: list[tuple[Path, str, str]] = []
    held: list[str] = []
    for path in where.claude_settings():
        permissions = _dict(_dict(read_jsonc(path)).get("permissions"))
        allowed += [
            (path, rule, f'permissions.allow "{rule}"') for rule in _strings(permissions.get("allow"))
        ]
        held += _strings(permissions.get("ask")) + _strings(permissions.get("deny"))
    state = _dict(read_jsonc(where.claude_json()))
    for key in where.project_keys():
        project = _dict(_dict(state.get("projects")).get(key))
        allowed += [
            (where.claude_json(), rule, f'projects["{key}"].allowedTools "{rule}"')
            for rule in _strings(project.get("allowedTools"))
        ]
    for path, rule, setting in allowed:
        open_to = [
            c
            for c in COMMANDS
            if claude_bash_covers(rule, c) and not any(claude_bash_covers(h, c) for h in held)
        ]
        if open_to:
            yield Finding(
                GATE_OPEN,
                where.show(path),
                f"the allow rule {rule!r} lets an agent in Claude Code run {_WHAT} without a prompt, "
                "writing memory with no human",
                f'remove {rule!r}, or add "Bash(engram commit:*)" and "Bash(engram save-session:*)" '
                "to permissions.ask",
                setting,
            )


# --- opencode -------------------------------------------------------------------------------------
def opencode_bash(permission: Any, command: str) -> tuple[str | None, str]:
    """(decision, rule) of a `permission` value for the bash tool running `command`: the last
    matching rule wins, as in opencode; None when no rule matches."""
    if isinstance(permission, str):
        return permission, f'"permission": "{permission}"'
    decision: str | None = None
    rule = ""
    for key, action in _dict(permission).items():
        if not fnmatch.fnmatchcase("bash", key.replace("[", "[[]")):
            continue
        if isinstance(action, str):
            decision, rule = action, f'"{key}": "{action}"'
        for pattern, act in _dict(action).items():
            if isinstance(act, str) and _wildcard(pattern, command):
                decision, rule = act, f'"{key}": {{"{pattern}": "{act}"}}'
    return decision, rule


def _opencode(where: Where, linked: Path | None) -> tuple[list[Finding], list[Finding]]:
    found: list[Finding] = []
    ruled = False
    for rules in opencode_config.rules(where):
        if isinstance(rules.permission, str):
            # "permission": "allow" is reported once, by the commit audit, with a fix for both
            ruled = ruled or rules.top_level
            continue
        decisions = [opencode_bash(rules.permission, c) for c in COMMANDS]
        ruled = ruled or (rules.top_level and any(d is not None for d, _ in decisions))
        opened = [rule for decision, rule in decisions if decision == "allow"]
        if opened:
            setting = f"{rules.label} {opened[0]}"
            found.append(
                Finding(
                    GATE_OPEN,
                    where.show(rules.path),
                    f"opencode lets an agent run {_WHAT} through bash without asking ({setting}), "
                    "writing memory with no human",
                    f'make the last {rules.label} bash rule for engram "ask": '
                    f'"bash": {{..., "engram *": "ask"}}',
                    setting,
                )
            )
    notes = []
    if linked is not None and ruled and _opencode_runs_anything(where):
        notes.append(
            Finding(
                SHELL_OPEN,
                where.show(linked),
                f"opencode asks before engram's commands but runs every other bash command unasked: {_OPEN_SHELL}",
                'make bash ask first: "permission": {"bash": {"*": "ask", …}} (and allow the commands you trust)',
                'bash "*" allow (opencode\'s default)',
            )
        )
    if linked is not None and not ruled:
        notes.append(
            Finding(
                SHELL_UNGATED,
                where.show(linked),
                f"opencode runs bash without asking by default, so an agent can run {_WHAT} itself, "
                "writing memory with no human",
                'run `engram link opencode` (it adds "permission": {"bash": {"engram commit *": "ask", …}})',
                "no bash permission rule for engram",
            )
        )
    return found, notes


def _opencode_runs_anything(where: Where) -> bool:
    """Whether opencode's default agent runs a command that names no engram unasked."""
    decision: str | None = None
    for rules in opencode_config.rules(where):
        if rules.top_level:
            found, _ = opencode_bash(rules.permission, "sh ./script.sh")
            decision = found if found is not None else decision
    return decision in (None, "allow")


# --- Codex ----------------------------------------------------------------------------------------
_WRITABLE = ("workspace-write", "danger-full-access")
_UNASKED = ("on-request", "on-failure", "never")


def _toml_file(path: Path) -> dict[str, Any]:
    return read_toml(path)


def _codex_ruled(where: Where, trusted: bool) -> bool:
    """Whether engram's prompt rule is in a folder Codex loads rules from."""
    files = [rule_files.rule_file("codex", True, where.workspace, where.env)]
    if trusted:
        files.append(rule_files.rule_file("codex", False, where.workspace, where.env))
    return any(f is not None and rule_files.installed(f) for f in files)


def _codex_linked(configs: list[dict[str, Any]]) -> bool:
    return any(
        entry_runs_engram("codex", entry)
        for config in configs
        for entry in _dict(config.get("mcp_servers")).values()
    )


def _codex(where: Where) -> Iterator[Finding]:
    user_path = codex_home(where.env) / "config.toml"
    project_path = where.workspace / ".codex" / "config.toml"
    trusted = codex_trusted(where)
    user, project = _toml_file(user_path), _toml_file(project_path) if trusted else {}
    decided = _codex_project_decided(where, user)
    ruled = _codex_ruled(where, trusted)
    set_policy = project.get("approval_policy") or user.get("approval_policy")
    set_sandbox = project.get("sandbox_mode") or user.get("sandbox_mode")
    sandbox = set_sandbox or ("workspace-write" if decided else "read-only")
    policy = set_policy or "on-request"
    shown = "{ granular = … }" if isinstance(policy, dict) else f'"{policy}"'
    if isinstance(policy, dict):  # granular: unmatched commands run as with on-request
        policy = "on-request"
    if sandbox not in _WRITABLE or policy not in _UNASKED:
        return
    if ruled:
        if _codex_linked([user, project]):
            yield Finding(
                SHELL_OPEN,
                where.show(project_path if trusted and project else user_path),
                f"Codex asks before engram's commands but runs every other command in its "
                f'{sandbox} sandbox unasked (approval "{policy}"): {_OPEN_SHELL}',
                'set approval_policy = "untrusted" (Codex then asks before any command that is not '
                "known to be safe)",
                f'sandbox_mode "{sandbox}", approval_policy "{policy}"',
            )
        return
    if set_policy is not None or set_sandbox is not None:
        setting = f'approval_policy = {shown}, sandbox_mode = "{sandbox}"'
        keys = ("approval_policy", "sandbox_mode")
        path = project_path if any(project.get(k) is not None for k in keys) else user_path
        yield Finding(
            GATE_OPEN,
            where.show(path),
            f"Codex runs shell commands such as {_WHAT} without asking ({setting}), "
            "writing memory with no human",
            "run `engram link codex` (a prompt rule for engram in .codex/rules/engram.rules), "
            'or set approval_policy = "untrusted"',
            setting,
        )
    elif _codex_linked([user, project]):
        yield Finding(
            SHELL_UNGATED,
            where.show(user_path),
            "in this project Codex's defaults are sandbox workspace-write and approval on-request, "
            f"which run {_WHAT} in the workspace without asking, writing memory with no human",
            "run `engram link codex` (it adds a prompt rule for engram in .codex/rules/engram.rules)",
            "no sandbox_mode (workspace-write in a project with a trust decision), no prompt rule",
        )


def _codex_project_decided(where: Where, user: dict[str, Any]) -> bool:
    """Whether this project has a trust decision (trusted or untrusted) in the user config."""
    here = where.workspace.resolve()
    for key, project in _dict(user.get("projects")).items():
        try:
            folder = Path(key).resolve()
        except (OSError, ValueError):
            continue
        if (here == folder or here.is_relative_to(folder)) and _dict(project).get("trust_level") in (
            "trusted",
            "untrusted",
        ):
            return True
    return False


# --- Gemini CLI -----------------------------------------------------------------------------------
def _gemini_shell(pattern: str) -> bool:
    match = re.fullmatch(r"\s*(run_shell_command|ShellTool)\s*(?:\((.*)\))?\s*", pattern, re.DOTALL)
    if match is None:
        return False
    prefix = match.group(2)
    return prefix is None or any(_prefix(prefix, c) for c in COMMANDS)


def _policy_shell(rule: dict[str, Any]) -> bool:
    if rule.get("decision") != "allow" or rule.get("mcpName") is not None:
        return False
    names = rule.get("toolName")
    tools = _strings(names) if isinstance(names, list) else [names] if isinstance(names, str) else []
    if "run_shell_command" not in tools:
        return False
    prefixes = rule.get("commandPrefix")
    prefixes = _strings(prefixes) if isinstance(prefixes, list) else [prefixes] if prefixes else []
    regex = rule.get("commandRegex")
    for command in COMMANDS:
        by_prefix = not prefixes or any(isinstance(p, str) and command.startswith(p) for p in prefixes)
        try:
            by_regex = not isinstance(regex, str) or re.search(regex, command) is not None
        except re.error:
            by_regex = False
        if by_prefix and by_regex:
            return True
    return False


def _gemini(where: Where) -> Iterator[Finding]:
    policy = rule_files.rule_file("gemini", True, where.workspace, where.env)
    ours = policy is not None and rule_files.installed(policy)
    for path in (where.home / ".gemini" / "settings.json", where.workspace / ".gemini" / "settings.json"):
        for pattern in _strings(_dict(_dict(read_jsonc(path)).get("tools")).get("allowed")):
            if _gemini_shell(pattern) and not gemini_covers(pattern) and not ours:
                yield Finding(
                    GATE_OPEN,
                    where.show(path),
                    f"tools.allowed {pattern!r} lets Gemini CLI run {_WHAT} without asking, "
                    "writing memory with no human",
                    f"remove {pattern!r} from tools.allowed, or allow only the commands you need by prefix",
                    f'tools.allowed "{pattern}"',
                )
    for path, n, rule in gemini_policy_rules(where.home):
        priority = rule.get("priority")
        outranked = ours and isinstance(priority, int) and priority < shell_rules.GEMINI_ASK_PRIORITY
        if _policy_shell(rule) and not outranked:
            yield Finding(
                GATE_OPEN,
                where.show(path),
                f"policy rule #{n} lets Gemini CLI run {_WHAT} without asking, writing memory with no human",
                f'give rule #{n} a commandPrefix that excludes engram, or change its decision to "ask_user"',
                f'[[rule]] #{n} toolName = "run_shell_command" decision = "allow"',
            )


def shell_audit(where: Where, *, opencode_linked: Path | None) -> tuple[list[Finding], list[Finding]]:
    """(host.gate_open findings for the shell door, host.shell_ungated notes); `opencode_linked`
    is the first opencode config that runs this engram, if any."""
    opencode, notes = _opencode(where, opencode_linked)
    found = [*_claude(where), *opencode, *_codex(where), *_gemini(where)]
    return found, notes
