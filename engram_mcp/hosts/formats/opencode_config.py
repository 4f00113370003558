"""Every place opencode reads permission rules from (SPEC §8, review L2).

The global and project config (`~/.config/opencode/opencode.json[c]`, `./opencode.json[c]`,
and `.opencode/opencode.json[c]`, which opencode 1.18 merges after the project's own file, so a
clone can carry one that overrides what `link` wrote): `permission` and each
`agent.<name>.permission`; and agents defined in markdown
(`.opencode/agent[s]/*.md`, `~/.config/opencode/agent[s]/*.md`) with a YAML front matter
`permission:`. A file that does not parse is skipped (it is not engram's).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from engram_mcp.hosts.doctor.findings import Where, read_jsonc
from store.files.fsutil import open_regular

_MAX_AGENT_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class Rules:
    """One `permission` value: where it is, how it is labelled, and whether it is a config's
    top-level `permission` (which the default agent uses) or one agent's."""

    path: Path
    label: str
    permission: Any
    top_level: bool


def config_files(where: Where) -> list[Path]:
    folders = (where.home / ".config" / "opencode", where.workspace, where.workspace / ".opencode")
    return [folder / name for folder in folders for name in ("opencode.jsonc", "opencode.json")]


def _front_matter(path: Path) -> dict[str, Any]:
    try:  # never a FIFO nor a device: a clone chooses what `.opencode/agent/x.md` is
        fd = open_regular(path, follow=True)
        try:
            text = os.read(fd, _MAX_AGENT_BYTES).decode("utf-8")
        finally:
            os.close(fd)
    except (OSError, UnicodeDecodeError):
        return {}
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    try:
        data = yaml.safe_load(text[3:end] if end > 0 else "")
    except Exception:  # noqa: BLE001 - a clone's `!!float nope` raises ValueError, deep nesting RecursionError: unparseable
        return {}
    return data if isinstance(data, dict) else {}


def _agent_files(where: Where) -> list[Path]:
    folders = (where.home / ".config" / "opencode", where.workspace / ".opencode")
    found: list[Path] = []
    for folder in folders:
        for name in ("agent", "agents"):
            directory = folder / name
            found += sorted(p for p in directory.glob("*.md") if p.is_file()) if directory.is_dir() else []
    return found


def rules(where: Where) -> list[Rules]:
    """Every `permission` value opencode may apply, config files first, then markdown agents."""
    found: list[Rules] = []
    for path in config_files(where):
        config = read_jsonc(path)
        if not isinstance(config, dict):
            continue
        if config.get("permission") is not None:
            found.append(Rules(path, "permission", config["permission"], True))
        agents = config.get("agent")
        for name, agent in (agents if isinstance(agents, dict) else {}).items():
            if isinstance(agent, dict) and agent.get("permission") is not None:
                found.append(Rules(path, f"agent.{name}.permission", agent["permission"], False))
    for path in _agent_files(where):
        permission = _front_matter(path).get("permission")
        if permission is not None:
            found.append(Rules(path, f"agent {path.stem} permission", permission, False))
    return found
