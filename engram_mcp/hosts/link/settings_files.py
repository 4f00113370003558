"""The settings files `engram link` edits beside a host's entry: Claude Code's SessionStart
hook and shell ask rules in `.claude/settings.json`, and VS Code's agent-terminal rule in the
settings.json beside its `mcp.json`. Each edit is a format-preserving JSONC splice, one write
with one backup; unlink gives the file back as it was."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from engram_mcp.hosts.edits import Result, finish, has_original, original, read
from engram_mcp.hosts.errors import HostError, JsoncError, RuleError
from engram_mcp.hosts.formats import jsonc
from engram_mcp.hosts.gate import gate_rules
from engram_mcp.hosts.link.launch import pinned
from engram_mcp.hosts.targets import HostFile, claude_settings, display_path, home_of
from engram_mcp.platform import vscode_user_dir

HOOK_MATCHER: Final = "startup|resume|clear|compact"
HOOK_SUFFIX: Final = "hook session-start"


def original_text(host: HostFile) -> str | None:
    """The file as it was before engram first changed it (its backup), or None."""
    return original(host.path, in_workspace=host.scope == "workspace")


def hook_command() -> str:
    command, args = pinned("engram")
    return " ".join([quote(command), *args, HOOK_SUFFIX])


def quote(word: str) -> str:
    return f'"{word}"' if " " in word else word


def _is_our_handler(handler: Any) -> bool:
    command = handler.get("command") if isinstance(handler, dict) else None
    return isinstance(command, str) and command.endswith(HOOK_SUFFIX) and "engram" in command


def _is_our_group(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(_is_our_handler(h) for h in hooks)


def hook_commands(settings: Path) -> list[str]:
    """The commands of engram's SessionStart handlers in a Claude settings file."""
    try:
        text = read(settings)
        groups = jsonc.get(text, ("hooks", "SessionStart")) if text else None
    except (HostError, JsoncError):
        return []
    return [
        handler["command"]
        for group in (groups if isinstance(groups, list) else [])
        if _is_our_group(group)
        for handler in group["hooks"]
        if _is_our_handler(handler)
    ]


def hook_installed(settings: Path) -> bool:
    return bool(hook_commands(settings))


def _hook_host(workspace: Path) -> HostFile:
    return HostFile(
        "claude", "workspace", claude_settings(workspace), "json", ("hooks",), ".claude/settings.json"
    )


def _hook_groups(text: str | None) -> Any:
    return jsonc.get(text, ("hooks", "SessionStart")) if text and text.strip() else None


def link_hook(workspace: Path, dry_run: bool) -> Result:
    """Add (or re-pin) engram's SessionStart group; other groups keep their bytes."""
    host = _hook_host(workspace)
    group = {
        "matcher": HOOK_MATCHER,
        "hooks": [{"type": "command", "command": hook_command(), "timeout": 30}],
    }
    try:
        before = read(host.path)
        groups = _hook_groups(before)
    except (HostError, JsoncError) as exc:
        return Result("claude", host.shown, "error", f"{getattr(exc, 'message', exc)}; left untouched")
    label = "SessionStart hook, shell ask rules"
    try:
        if isinstance(groups, list) and group in groups:
            after = before or ""
        elif before is None or not before.strip():
            after = jsonc.new_document(("hooks",), "SessionStart", [group])
        elif not isinstance(groups, list):
            after = jsonc.set_member(before, ("hooks",), "SessionStart", [group])
        else:
            after = before
            for index in reversed([i for i, g in enumerate(groups) if _is_our_group(g)]):
                after = jsonc.remove_item(after, ("hooks", "SessionStart"), index)  # a stale pin
            after = jsonc.append_item(after, ("hooks", "SessionStart"), group)
        after = gate_rules.add_claude_ask(after, original_text(host))  # one write: one backup
    except JsoncError as exc:
        return Result("claude", host.shown, "error", f"line {exc.line}: {exc.message}; left untouched")
    except RuleError as exc:
        return Result("claude", host.shown, "error", f"{exc}; left untouched")
    return finish(host, before, after, "added" if groups is None else "updated", dry_run, label)


def unlink_hook(workspace: Path, dry_run: bool) -> Result:
    host = _hook_host(workspace)
    try:
        before = read(host.path)
        groups = _hook_groups(before)
    except (HostError, JsoncError) as exc:
        return Result("claude", host.shown, "error", f"{getattr(exc, 'message', exc)}; left untouched")
    label = "SessionStart hook, shell ask rules"
    if before is None:
        return Result("claude", host.shown, "absent", label)
    text = gate_rules.remove_claude_ask(before, original_text(host))
    groups = _hook_groups(text)
    ours = [i for i, g in enumerate(groups) if _is_our_group(g)] if isinstance(groups, list) else []
    after: str | None
    if ours and isinstance(groups, list) and len(ours) == len(groups):
        text = jsonc.remove_member(text, ("hooks",), "SessionStart")
    else:
        for index in reversed(ours):
            text = jsonc.remove_item(text, ("hooks", "SessionStart"), index)
    after = text
    if after.strip() in ("", "{}") and not original_exists(host) and not host.path.is_symlink():
        after = None
    return finish(host, before, after, "removed", dry_run, label)


def _settings_host(workspace: Path, global_: bool, env: Mapping[str, str]) -> HostFile:
    home = Path(env.get("HOME") or Path.home())
    folder = Path(env["CLAUDE_CONFIG_DIR"]) if global_ and env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    path = folder / "settings.json" if global_ else claude_settings(workspace)
    shown = "~/.claude/settings.json" if global_ else ".claude/settings.json"
    return HostFile("claude", "global" if global_ else "workspace", path, "json", ("permissions",), shown)


def link_claude_ask(workspace: Path, global_: bool, dry_run: bool, env: Mapping[str, str]) -> Result:
    """Claude Code's `permissions.ask` rules for engram's CLI writes (shell_rules.py)."""
    host = _settings_host(workspace, global_, env)
    return add_rules(host, gate_rules.add_claude_ask, dry_run, "shell ask rules")


def unlink_claude_ask(workspace: Path, global_: bool, dry_run: bool, env: Mapping[str, str]) -> Result:
    host = _settings_host(workspace, global_, env)
    return remove_rules(host, gate_rules.remove_claude_ask, dry_run, "shell ask rules")


def vscode_settings(workspace: Path, global_: bool, env: Mapping[str, str]) -> HostFile:
    """The settings.json beside VS Code's mcp.json at that scope: its agent terminal's rules."""
    home = home_of(env)
    path = (
        vscode_user_dir(home, env) / "settings.json" if global_ else workspace / ".vscode" / "settings.json"
    )
    shown = display_path(path, workspace, home)
    return HostFile("vscode", "global" if global_ else "workspace", path, "jsonc", (), shown)


def add_rules(
    host: HostFile, add: Callable[[str | None, str | None], str], dry_run: bool, label: str
) -> Result:
    """Engram's rules added to `host` by `add(text, original)`; a file it cannot take is left
    untouched, with the reason."""
    try:
        before = read(host.path)
        after = add(before, original_text(host))
    except (HostError, JsoncError, RuleError) as exc:
        return Result(host.target, host.shown, "error", f"{getattr(exc, 'message', exc)}; left untouched")
    return finish(host, before, after, "added", dry_run, label)


def remove_rules(
    host: HostFile, remove: Callable[[str, str | None], str], dry_run: bool, label: str
) -> Result:
    """The inverse of `_add_rules`: a file engram created and left empty is removed."""
    try:
        before = read(host.path)
        if before is None:
            return Result(host.target, host.shown, "absent", label)
        after: str | None = remove(before, original_text(host))
    except (HostError, JsoncError) as exc:
        return Result(host.target, host.shown, "error", f"{getattr(exc, 'message', exc)}; left untouched")
    if after is not None and after.strip() in ("", "{}") and not original_exists(host):
        after = None if not host.path.is_symlink() else after
    return finish(host, before, after, "removed", dry_run, label)


def original_exists(host: HostFile) -> bool:
    return has_original(host.path, in_workspace=host.scope == "workspace")
