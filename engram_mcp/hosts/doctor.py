"""`engram doctor` and `engram upgrade` over every known host file (SPEC §8).

doctor checks each engram entry (present, command resolvable, pinned to this installation, hook
present), Claude's user and local scopes in `~/.claude.json` included; audits the gate
(audit.py: `host.gate_open`, exit 1); and lists the host-side steps still missing for
workspace links (steps.py: `host.step_pending`, informational), and the `/engram` command
beside each linked entry (commands.py: `host.command_missing`, `host.command_stale`,
informational; the fix is `engram link <host>`). A host whose shell runs `engram
commit` unasked only by its default (opencode) is reported among the steps as
`host.shell_ungated` (shell_audit.py, informational).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engram_mcp.hosts.audit import audit
from engram_mcp.hosts.edits import Result, read
from engram_mcp.hosts.errors import HostError
from engram_mcp.hosts.findings import Finding, Where
from engram_mcp.hosts.launch import is_current, resolve
from engram_mcp.hosts.link import (
    current_entry,
    entry_is_ours,
    hook_installed,
    link_file,
    link_hook,
)
from engram_mcp.hosts.rule_files import link_rules, rule_file
from engram_mcp.hosts.shell_rules import MARK
from engram_mcp.hosts.slash_commands import check_command, command_files, is_ours, link_command
from engram_mcp.hosts.steps import step_for
from engram_mcp.hosts.targets import TARGETS, HostFile, claude_settings, known_files


def _command_of(host: HostFile, entry: Mapping[str, Any]) -> tuple[Any, list[Any]]:
    command = entry.get("command")
    if host.target == "opencode" and isinstance(command, list) and command:
        return command[0], list(command[1:])
    args = entry.get("args")
    return command, list(args) if isinstance(args, list) else []


def check_file(host: HostFile, workspace: Path) -> tuple[bool, list[Finding]]:
    """(engram entry present, findings) for one host file."""
    link_hint = f"engram link {host.target}" + (" --global" if host.scope == "global" else "")
    try:
        text = read(host.path)
        entry = current_entry(host, text)
    except HostError as exc:
        return False, [Finding("host.parse_error", host.shown, exc.message, "fix the syntax error by hand")]
    if entry is None:
        return False, []
    if not entry_is_ours(host, entry):
        return True, [
            Finding(
                "host.foreign",
                host.shown,
                f"the `engram` entry runs {entry.get('command')!r}, another tool's server",
                f"rename or remove it, or replace it with `{link_hint} --force`",
            )
        ]
    findings = []
    command, args = _command_of(host, entry)
    if not isinstance(command, str) or resolve(command) is None:
        findings.append(
            Finding(
                "host.command_missing",
                host.shown,
                f"command {command!r} does not exist",
                f"run `engram upgrade` or `{link_hint}`",
            )
        )
    elif not is_current(command, args):
        findings.append(
            Finding(
                "host.pin_stale",
                host.shown,
                f"command {command!r} is not this engram installation",
                "run `engram upgrade`",
            )
        )
    if host.target == "claude" and host.scope == "workspace":
        has_hook = hook_installed(claude_settings(workspace))
        if not has_hook and "--always-load" not in args:
            findings.append(
                Finding(
                    "host.hook_missing",
                    ".claude/settings.json",
                    "no engram SessionStart hook",
                    "run `engram link claude`",
                )
            )
    return True, findings


def _claude_json_files(workspace: Path, env: Mapping[str, str]) -> list[HostFile]:
    """Claude Code's user scope and this project's local scope, both in `~/.claude.json`."""
    where = Where(workspace, env)
    path, shown = where.claude_json(), where.show(where.claude_json())
    found = [HostFile("claude", "user", path, "json", ("mcpServers",), shown)]
    for key in where.project_keys():
        found.append(HostFile("claude", "local", path, "json", ("projects", key, "mcpServers"), shown))
    return found


def _command_steps(host: HostFile, workspace: Path, env: Mapping[str, str]) -> list[Finding]:
    """The `/engram` command beside a linked entry: missing or stale (commands.py)."""
    files = command_files(host.target, host.scope != "workspace", workspace, env)
    return [f for f in (check_command(file) for file in files) if f is not None]


def doctor(
    workspace: Path, env: Mapping[str, str] = os.environ
) -> tuple[list[str], list[Finding], list[Finding]]:
    """(files with an engram entry, findings, host steps still pending) across every known host file."""
    linked: list[str] = []
    findings: list[Finding] = []
    steps: list[Finding] = []
    for host in [*known_files(workspace, env), *_claude_json_files(workspace, env)]:
        present, found = check_file(host, workspace)
        if present:
            scope = f" ({host.scope} scope)" if host.scope in ("user", "local") else ""
            linked.append(f"{host.target}: {host.shown}{scope}")
        findings.extend(found)
        if present and not found and host.scope == "workspace":
            step = step_for(host.target, workspace, env)
            steps.extend([step] if step is not None else [])
        if present and not any(f.code == "host.foreign" for f in found) and host.scope != "local":
            steps.extend(_command_steps(host, workspace, env))
    gate, notes = audit(workspace, env)
    findings.extend(gate)
    steps.extend(notes)
    return linked, list(dict.fromkeys(findings)), steps


def upgrade(workspace: Path, *, dry_run: bool = False, env: Mapping[str, str] = os.environ) -> list[Result]:
    """Re-pin every entry of ours to this installation; other entries are not touched."""
    results = []
    for host in known_files(workspace, env):
        try:
            entry = current_entry(host, read(host.path))
        except HostError:
            continue
        if entry is None or not entry_is_ours(host, entry):
            continue
        _, args = _command_of(host, entry)
        extra = [a for a in args if isinstance(a, str) and a.startswith("--")]
        results.append(link_file(host, args=extra, force=False, dry_run=dry_run))
    if hook_installed(claude_settings(workspace)):
        results.append(link_hook(workspace, dry_run))
    for target in ("codex", "gemini"):  # re-pin engram's shell-rule files (they name the script)
        for global_ in (False, True):
            rules = rule_file(target, global_, workspace, env)
            try:
                text = read(rules.path) if rules is not None else None
            except HostError:
                continue
            if rules is not None and text is not None and MARK in text and text != rules.text:
                results.append(link_rules(rules, dry_run=dry_run))
    for target in TARGETS:  # re-pin every /engram command of ours (its text names `engram`)
        for global_ in (False, True):
            for file in command_files(target, global_, workspace, env):
                try:
                    text = read(file.path)
                except HostError:
                    continue
                if text is not None and is_ours(text) and text != file.text:
                    results.append(link_command(file, force=False, dry_run=dry_run))
    return results
