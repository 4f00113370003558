"""`engram doctor` and `engram upgrade` over every known host file (SPEC §8).

The rest, and why: docs/design.md, `engram_mcp/hosts/doctor/doctor.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, Final

from engram_mcp.hosts.doctor import outside_files
from engram_mcp.hosts.doctor.findings import Finding, Where
from engram_mcp.hosts.edits import CLAUDE_STATE_LIMIT, HOST_FILE_LIMIT, Result, read
from engram_mcp.hosts.errors import HostError, LinkRefused
from engram_mcp.hosts.gate import editor_shells
from engram_mcp.hosts.gate.audit import audit
from engram_mcp.hosts.gate.shell_rules import MARK
from engram_mcp.hosts.link import hook_plugin, session_hooks
from engram_mcp.hosts.link.launch import LINK_ARGS, is_current, resolve, unknown_args
from engram_mcp.hosts.link.link import (
    UNSAFE_ENV,
    Warn,
    current_entry,
    entry_is_ours,
    entry_unsafe_env,
    entry_unsafe_keys,
    escapes,
    link_file,
    portable,
)
from engram_mcp.hosts.link.path_hint import fix, off_path
from engram_mcp.hosts.link.rule_files import link_rules, rule_file
from engram_mcp.hosts.link.settings_files import HOOK_SUFFIX, hook_commands, hook_installed, link_hook
from engram_mcp.hosts.link.slash_commands import check_command, command_files, is_ours, link_command
from engram_mcp.hosts.link.steps import step_for
from engram_mcp.hosts.targets import TARGETS, HostFile, claude_settings, known_files
from store.safety import untrusted


def _command_of(host: HostFile, entry: Mapping[str, Any]) -> tuple[Any, list[Any]]:
    command = entry.get("command")
    if host.target == "opencode" and isinstance(command, list) and command:
        return command[0], list(command[1:])
    args = entry.get("args")
    return command, list(args) if isinstance(args, list) else []


UNSAFE_ARGS: Final = "host.args_unsafe"
NOT_ON_PATH: Final = "host.not_on_path"
NOT_PORTABLE: Final = "host.not_portable"


def portability(target: str, shown: str, command: object, env: Mapping[str, str]) -> Finding | None:
    """For a committed (workspace) file: `host.not_on_path` when it names the bare `engram-mcp`
    and PATH here does not lead to this installation's, `host.not_portable` when it names a path
    of this machine (a teammate's host cannot start it); else None."""
    if not isinstance(command, str):
        return None
    off = off_path(env)
    if command == "engram-mcp":  # the bare name, for PATH to find
        if off is None:
            return None
        return Finding(
            NOT_ON_PATH,
            shown,
            f"the entry runs engram-mcp by name, as a committed file should, but {off.problem()}",
            f"{fix(off, env)}; then restart the host",
        )
    relink = f"run `engram link {target}` to write the bare name engram-mcp"
    return Finding(
        NOT_PORTABLE,
        shown,
        f"the entry runs {untrusted.line(command)!r}, a path on this machine only: a teammate's host "
        "cannot start it from the committed file",
        relink if off is None else f"{fix(off, env)}; then {relink}",
    )


def _hook_portability(workspace: Path, env: Mapping[str, str]) -> list[Finding]:
    """`host.not_portable` for an engram SessionStart hook that runs engram by a path."""
    for command in hook_commands(claude_settings(workspace)):
        program = command.removesuffix(HOOK_SUFFIX).strip().strip('"')
        if program != "engram":
            off = off_path(env)
            relink = "run `engram link claude` to write the bare name engram"
            return [
                Finding(
                    NOT_PORTABLE,
                    ".claude/settings.json",
                    f"the SessionStart hook runs {untrusted.line(program)!r}, a path on this machine "
                    "only: a teammate's Claude Code cannot run it from the committed file",
                    relink if off is None else f"{fix(off, env)}; then {relink}",
                )
            ]
    return []


def check_file(
    host: HostFile, workspace: Path, env: Mapping[str, str] = os.environ
) -> tuple[bool, list[Finding]]:
    """(engram entry present, findings) for one host file."""
    link_hint = f"engram link {host.target}" + (" --global" if host.scope == "global" else "")
    limit = CLAUDE_STATE_LIMIT if host.scope in ("user", "local") else HOST_FILE_LIMIT
    try:
        text = read(host.path, limit)
        entry = current_entry(host, text)
    except HostError as exc:
        by_hand = (
            "fix the syntax error by hand"
            if exc.code == "ENGRAM_HOST_PARSE"
            else "replace it with a regular text file (the host's config), or remove it"
        )
        return False, [Finding("host.parse_error", host.shown, exc.message, by_hand)]
    if entry is None:
        return False, []
    if not entry_is_ours(host, entry, workspace):
        return True, [
            Finding(
                "host.foreign",
                host.shown,
                f"the `engram` entry runs {entry.get('command')!r}, another tool's server",
                f"rename or remove it, or replace it with `{link_hint} --force`",
            )
        ]
    findings = []
    if unsafe := entry_unsafe_env(entry, host.scope):
        findings.append(
            Finding(
                UNSAFE_ENV,
                host.shown,
                f"the entry's env sets {', '.join(untrusted.line(n, 80) for n in unsafe)}, which can "
                "change what the server runs or trusts (a cloned file could have it import the project's "
                "code, or read the project's folder as your home)",
                f"run `{link_hint}`, which drops them"
                if host.scope in ("workspace", "global")
                else f"remove them from the entry's env in {host.shown}, or run `claude mcp remove "
                f"--scope {host.scope} engram`, then `{link_hint} --global`",
            )
        )
    if keys := entry_unsafe_keys(entry):
        findings.append(
            Finding(
                UNSAFE_ENV,
                host.shown,
                f"the entry sets {', '.join(untrusted.line(k, 80) for k in keys)}: an env file or a "
                "folder to start in, which can change what the server runs or trusts (a cloned "
                "file could have it read the project's variables)",
                f"run `{link_hint}`, which drops them"
                if host.scope in ("workspace", "global")
                else f"remove them from the entry in {host.shown}",
            )
        )
    command, args = _command_of(host, entry)
    if extra := unknown_args(command, args):
        findings.append(
            Finding(
                UNSAFE_ARGS,
                host.shown,
                f"the entry gives the server {', '.join(untrusted.line(a, 80) for a in extra)}, "
                "which engram link never writes (a cloned file could point it at another folder "
                "or turn its confirmations off)",
                f"run `{link_hint}`, which drops them"
                if host.scope in ("workspace", "global")
                else f"remove them from the entry's args in {host.shown}",
            )
        )
    committed = portability(host.target, host.shown, command, env) if host.scope == "workspace" else None
    if committed is not None:
        findings.append(committed)
    elif not isinstance(command, str) or resolve(command) is None:
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
        findings += _hook_portability(workspace, env)
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
    if host.target in ("codex", "gemini") and host.scope == "workspace":
        findings += session_hooks.findings(host.target, workspace, env)
    if host.target == "opencode" and host.scope == "workspace":
        findings += hook_plugin.findings(workspace, env)
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
    return [f for f in (check_command(file, env) for file in files) if f is not None]


def doctor(
    workspace: Path, env: Mapping[str, str] = os.environ, *, workspace_files: bool = True
) -> tuple[list[str], list[Finding], list[Finding]]:
    """(files with an engram entry, findings, host steps still pending) across every known host
    file; without `workspace_files` (no project here) the user-level files only."""
    linked: list[str] = []
    targets: set[str] = set()
    in_project: dict[str, str] = {}
    findings: list[Finding] = []
    steps: list[Finding] = []
    hosts = [*known_files(workspace, env), *_claude_json_files(workspace, env)]
    if not workspace_files:
        hosts = [h for h in hosts if h.scope in ("global", "user")]
    for host in hosts:
        present, found = check_file(host, workspace, env)
        if present:
            scope = f" ({host.scope} scope)" if host.scope in ("user", "local") else ""
            linked.append(f"{host.target}: {host.shown}{scope}")
            targets.add(host.target)
        findings.extend(found)
        if present and not found and host.scope == "workspace":
            step = step_for(host.target, workspace, env)
            steps.extend([step] if step is not None else [])
        if present and not any(f.code == "host.foreign" for f in found) and host.scope != "local":
            steps.extend(_command_steps(host, workspace, env))
            if host.scope == "workspace":
                in_project.setdefault(host.target, host.shown)
    findings.extend(outside_files.missing(in_project, workspace, env))
    gate, notes = audit(workspace, env)
    where = Where(workspace, env)
    findings.extend([*gate, *editor_shells.vscode_gate(where), *editor_shells.cursor_gate(where)])
    steps.extend([*notes, *editor_shells.notes(targets, where)])
    return linked, list(dict.fromkeys(findings)), steps


Step = Callable[..., Result]
"""One re-pin of `upgrade`, called with `dry_run=`."""


def _refused(result: Result, *, dry_run: bool) -> Result:
    return result


def _steps(workspace: Path, env: Mapping[str, str]) -> list[tuple[bool, Step]]:
    """(in the workspace, the re-pin) for every file of ours that names the installation; a
    workspace file that leads outside the workspace through a symbolic link gets its refusal
    instead (link.escapes), and nothing is written there."""
    steps: list[tuple[bool, Step]] = []

    def add(in_workspace: bool, target: str, path: Path, step: Step) -> None:
        refused = escapes(target, [path], workspace, env) if in_workspace else []
        steps.append((in_workspace, partial(_refused, refused[0]) if refused else step))

    for host in known_files(workspace, env):
        try:
            entry = current_entry(host, read(host.path))
        except HostError:
            continue
        if entry is None or not entry_is_ours(host, entry, workspace):
            continue
        _, args = _command_of(host, entry)
        extra = [a for a in args if isinstance(a, str) and a in LINK_ARGS]  # not a clone's --workspace=…
        add(
            host.scope == "workspace",
            host.target,
            host.path,
            partial(link_file, host, args=extra, force=False, workspace=workspace),
        )
    if hook_installed(claude_settings(workspace)):
        add(True, "claude", claude_settings(workspace), partial(link_hook, workspace))
    if session_hooks.codex_installed(workspace):  # Gemini's is re-pinned with its entry
        add(
            True,
            "codex",
            session_hooks.codex_hooks(workspace).path,
            partial(session_hooks.link_codex, workspace),
        )
    if hook_plugin.is_stale(workspace):
        plugin = partial(hook_plugin.link_plugin, workspace, force=False, env=env)
        add(True, "opencode", hook_plugin.plugin_path(workspace), plugin)
    for target in ("codex", "gemini"):  # re-pin engram's shell-rule files (they name the script)
        for global_ in (False, True):
            rules = rule_file(target, global_, workspace, env)
            try:
                text = read(rules.path) if rules is not None else None
            except HostError:
                continue
            if rules is not None and text is not None and MARK in text and text != rules.text:
                add(rules.scope == "workspace", target, rules.path, partial(link_rules, rules))
    for target in TARGETS:  # re-pin every /engram command of ours (its text names `engram`)
        for global_ in (False, True):
            for file in command_files(target, global_, workspace, env):
                try:
                    text = read(file.path)
                except HostError:
                    continue
                if text is not None and is_ours(text) and text != file.text:
                    add(
                        file.scope == "workspace", target, file.path, partial(link_command, file, force=False)
                    )
    return steps


def upgrade(
    workspace: Path,
    *,
    dry_run: bool = False,
    machine_local: bool = False,
    warn: Warn = lambda code, message: None,
    env: Mapping[str, str] = os.environ,
) -> tuple[list[Result], LinkRefused | None]:
    """Re-pin every entry of ours to this installation; other entries are not touched. The
    project's files follow `link`'s rule (link.portable): while PATH here does not find this
    installation they are left as they are, with the refusal to show (ENGRAM_NOT_ON_PATH),
    unless `machine_local`; the user-level files are re-pinned either way."""
    steps = _steps(workspace, env)
    shared = [step for in_workspace, step in steps if in_workspace]
    refused = None
    if any(step(dry_run=True).action != "unchanged" for step in shared):
        try:
            left = "the project's files were left as they are (your user-level ones were re-pinned)"
            portable("upgrade", machine_local=machine_local, warn=warn, env=env, left=left)
        except LinkRefused as exc:
            refused = exc
    chosen = [step for in_workspace, step in steps if not (in_workspace and refused is not None)]
    return [step(dry_run=dry_run) for step in chosen], refused
