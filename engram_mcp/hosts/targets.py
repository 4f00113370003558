"""Where each host keeps its MCP servers (SPEC §8, HOSTS.md), per scope."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from engram_mcp.platform import claude_desktop_config, vscode_user_dir

TARGETS: Final = (
    "claude",
    "codex",
    "gemini",
    "antigravity",
    "cursor",
    "opencode",
    "windsurf",
    "vscode",
    "claude-desktop",
)


@dataclass(frozen=True, slots=True)
class HostFile:
    """One config file engram may edit, and how its entry is shaped."""

    target: str
    scope: str
    """workspace or global"""
    path: Path
    format: str
    """json, jsonc or toml"""
    container: tuple[str, ...]
    shown: str
    """How the file is named to users (relative to the workspace or ~)."""

    def entry(self, command: str, args: list[str]) -> dict[str, Any]:
        if self.target == "opencode":
            return {"type": "local", "command": [command, *args], "enabled": True}
        if self.target == "vscode":
            return {"type": "stdio", "command": command, "args": args}
        return {"command": command, "args": args}


@dataclass(frozen=True, slots=True)
class Skip:
    """A target/scope engram does not write, and why (`claude-global`: printed instead)."""

    target: str
    scope: str
    message: str


def home_of(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def display_path(path: Path, workspace: Path, home: Path) -> str:
    for base, label in ((workspace, "."), (home, "~")):
        try:
            return f"{label}/{path.relative_to(base).as_posix()}"
        except ValueError:
            continue
    return str(path)


def codex_home(env: Mapping[str, str] = os.environ) -> Path:
    """Codex's user folder: `$CODEX_HOME`, else `~/.codex`."""
    return Path(env.get("CODEX_HOME") or home_of(env) / ".codex")


def _first_existing(*paths: Path) -> Path:
    return next((p for p in paths if p.exists()), paths[-1])


def resolve(
    target: str, global_: bool, workspace: Path, env: Mapping[str, str] = os.environ
) -> HostFile | Skip:
    """The file `engram link target [--global]` edits, or why there is none."""
    home = home_of(env)
    scope = "global" if global_ else "workspace"

    def host(path: Path, fmt: str, container: tuple[str, ...] = ("mcpServers",)) -> HostFile:
        return HostFile(target, scope, path, fmt, container, display_path(path, workspace, home))

    if target == "claude":
        return Skip(target, scope, "claude-global") if global_ else host(workspace / ".mcp.json", "json")
    if target == "codex":
        folder = codex_home(env) if global_ else workspace / ".codex"
        return host(folder / "config.toml", "toml", ("mcp_servers",))
    if target == "gemini":
        base = home if global_ else workspace
        return host(base / ".gemini" / "settings.json", "jsonc")
    if target == "antigravity":
        if not global_:
            return Skip(target, scope, "Antigravity keeps its MCP servers in a user-level config only")
        legacy = home / ".gemini" / "antigravity" / "mcp_config.json"
        return host(legacy if legacy.exists() else home / ".gemini" / "config" / "mcp_config.json", "json")
    if target == "cursor":
        return host((home if global_ else workspace) / ".cursor" / "mcp.json", "jsonc")
    if target == "opencode":
        base = home / ".config" / "opencode" if global_ else workspace
        return host(_first_existing(base / "opencode.jsonc", base / "opencode.json"), "jsonc", ("mcp",))
    if target == "windsurf":
        if not global_:
            return Skip(target, scope, "Windsurf documents only a user-level MCP config")
        return host(home / ".codeium" / "windsurf" / "mcp_config.json", "json")
    if target == "vscode":
        folder = vscode_user_dir(home, env) if global_ else workspace / ".vscode"
        return host(folder / "mcp.json", "jsonc", ("servers",))
    if target == "claude-desktop":
        if not global_:
            return Skip(target, scope, "Claude Desktop has only a user-level config")
        return host(claude_desktop_config(home, env), "json")
    raise ValueError(f"unknown target {target!r}")


def known_files(workspace: Path, env: Mapping[str, str] = os.environ) -> list[HostFile]:
    """Every host file doctor and upgrade look at, both scopes."""
    found = []
    for target in TARGETS:
        for global_ in (False, True):
            resolved = resolve(target, global_, workspace, env)
            if isinstance(resolved, HostFile):
                found.append(resolved)
    return found


def claude_settings(workspace: Path) -> Path:
    return workspace / ".claude" / "settings.json"
