"""What `engram doctor` reports about host files (SPEC §8), and where it looks."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from engram_mcp.hosts.edits import CLAUDE_STATE_LIMIT, HOST_FILE_LIMIT, read_quietly
from engram_mcp.hosts.errors import JsoncError
from engram_mcp.hosts.formats import jsonc
from engram_mcp.hosts.targets import display_path, home_of
from engram_mcp.platform import vscode_user_dir

INFORMATIONAL: Final = (
    "host.step_pending",
    "host.command_missing",
    "host.command_stale",
    "host.shell_open",
    "host.shell_unasked",
    "workspace.outside_git",
    "derived.rebuilt",
    "ui.memory_readable",
)
"""Codes doctor lists as steps still to do or things to know (exit 0), not as problems to fix;
the last three are engram_mcp.hosts.doctor.health's: a workspace outside git, a derived file engram rebuilt,
a platform where the review page's memory stays readable to the user's other processes."""


@dataclass(frozen=True, slots=True)
class Finding:
    """`code` is stable (host.gate_open, host.step_pending, …); `file` is shown as ./… or ~/…;
    `setting` names the key or rule found, when there is one."""

    code: str
    file: str
    message: str
    fix: str
    setting: str = ""

    def line(self) -> str:
        label = "Next" if self.code in INFORMATIONAL else "Fix"
        return f"{self.code}  {self.file}: {self.message}. {label}: {self.fix}"

    def data(self) -> dict[str, str]:
        return {
            "code": self.code,
            "file": self.file,
            "message": self.message,
            "fix": self.fix,
            "setting": self.setting,
        }


def read_jsonc(path: Path) -> Any:
    """A JSON / JSONC file's data, or None when it is missing, unreadable or broken (the audits
    only look; a broken host file is reported by the entry check, other files are not ours).
    Read as every host file is (edits.read_quietly: bounded, regular files only), with
    `~/.claude.json`'s larger cap."""
    limit = CLAUDE_STATE_LIMIT if path.name == ".claude.json" else HOST_FILE_LIMIT
    text = read_quietly(path, limit)
    try:
        return jsonc.loads(text) if text is not None and text.strip() else None
    except (JsoncError, RecursionError):
        return None


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's data, or {} when it is missing, unreadable or broken (read as `read_jsonc`)."""
    try:
        return tomllib.loads(read_quietly(path) or "")
    except (tomllib.TOMLDecodeError, RecursionError):
        return {}


class Where:
    """Paths of one doctor run, shown the way users see them."""

    def __init__(self, workspace: Path, env: Mapping[str, str]) -> None:
        self.workspace = workspace
        self.env = env
        self.home = home_of(env)
        self._vscode: list[tuple[Path, dict[str, Any]]] | None = None

    def show(self, path: Path) -> str:
        return display_path(path, self.workspace, self.home)

    def claude_dir(self) -> Path:
        return (
            Path(self.env["CLAUDE_CONFIG_DIR"])
            if self.env.get("CLAUDE_CONFIG_DIR")
            else self.home / ".claude"
        )

    def claude_json(self) -> Path:
        folder = self.env.get("CLAUDE_CONFIG_DIR")
        return Path(folder) / ".claude.json" if folder else self.home / ".claude.json"

    def vscode_settings(self) -> list[tuple[Path, dict[str, Any]]]:
        if self._vscode is None:  # the audits and the editors' notes each ask: read once
            self._vscode = self._read_vscode_settings()
        return self._vscode

    def _read_vscode_settings(self) -> list[tuple[Path, dict[str, Any]]]:
        """Every VS Code settings object that may apply here, with its file: the workspace's
        `.vscode/settings.json`, the `settings` of each `*.code-workspace` in it, its `.vscode/`
        or its parent, then each user folder's `settings.json` and its profiles' (VS Code,
        Insiders, OSS, VSCodium, their Flatpaks, and a remote's `~/.vscode-server`)."""
        found: list[tuple[Path, Any]] = [(self.workspace / ".vscode" / "settings.json", None)]
        for folder in (self.workspace, self.workspace / ".vscode", self.workspace.parent):
            found += [(w, "settings") for w in sorted(folder.glob("*.code-workspace"))]
        stable = vscode_user_dir(self.home, self.env)
        users = [
            stable.parent.parent / flavour / "User"
            for flavour in ("Code", "Code - Insiders", "Code - OSS", "VSCodium")
        ]
        users += [self.home / ".vscode-server" / "data" / part for part in ("Machine", "User")]
        users += [
            self.home / ".var" / "app" / "com.visualstudio.code" / "config" / "Code" / "User",
            self.home / ".var" / "app" / "com.vscodium.codium" / "config" / "VSCodium" / "User",
        ]
        for user in users:
            found.append((user / "settings.json", None))
            found += [(p, None) for p in sorted(user.glob("profiles/*/settings.json"))]
        settings = []
        for path, member in found:
            data = read_jsonc(path)
            data = data.get(member) if member and isinstance(data, dict) else data
            if isinstance(data, dict):
                settings.append((path, data))
        return settings

    def claude_settings(self) -> list[Path]:
        local = self.workspace / ".claude"
        return [self.claude_dir() / "settings.json", local / "settings.json", local / "settings.local.json"]

    def project_keys(self) -> list[str]:
        """How hosts key this project: its path as given and resolved."""
        return list(dict.fromkeys([str(self.workspace), str(self.workspace.resolve())]))


def gemini_policy_rules(home: Path) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """(file, 1-based number, rule) of every `[[rule]]` in the user's Gemini policy files;
    a file that cannot be read or parsed is skipped (Gemini would not load it either)."""
    folder = home / ".gemini" / "policies"
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        rules = read_toml(path).get("rule")
        for n, rule in enumerate(rules if isinstance(rules, list) else [], 1):
            if isinstance(rule, dict):
                yield path, n, rule
