"""The shell-rule files engram owns whole: Codex's `engram.rules`, Gemini CLI's `engram.toml`
(shell_rules.py has their text). `link` writes one, `unlink` removes it and the folders it
left empty; a file at that path without engram's mark is the user's and is left alone."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engram_mcp.hosts import shell_rules
from engram_mcp.hosts.edits import Result, backup_path, diff, prune_empty, read, write
from engram_mcp.hosts.errors import HostError
from engram_mcp.hosts.targets import codex_home, display_path, home_of

LABEL = "shell rules"


@dataclass(frozen=True, slots=True)
class RuleFile:
    target: str
    path: Path
    shown: str
    text: str
    base: Path
    """Never removed: the folder this scope starts at."""


def rule_file(
    target: str, global_: bool, workspace: Path, env: Mapping[str, str] = os.environ
) -> RuleFile | None:
    """The rules file `engram link target` writes at this scope, or None."""
    home = home_of(env)
    if target == "codex":
        folder = codex_home(env) if global_ else workspace / ".codex"
        path = folder / "rules" / shell_rules.CODEX_FILE
        base = workspace if not global_ else home if folder.is_relative_to(home) else folder
        return RuleFile(target, path, display_path(path, workspace, home), shell_rules.codex_text(), base)
    if target == "gemini":  # Gemini CLI 0.61 loads no workspace policies: the user folder, both scopes
        path = home / ".gemini" / "policies" / shell_rules.GEMINI_FILE
        return RuleFile(target, path, display_path(path, workspace, home), shell_rules.gemini_text(), home)
    return None


def _ours(text: str) -> bool:
    return shell_rules.MARK in text


def link_rules(file: RuleFile, *, dry_run: bool) -> Result:
    try:
        before = read(file.path)
    except HostError as exc:
        return Result(file.target, file.shown, "error", exc.message)
    if before == file.text:
        return Result(file.target, file.shown, "unchanged", LABEL)
    if before is not None and not _ours(before):
        return Result(
            file.target,
            file.shown,
            "error",
            f"{LABEL}: a file there is not engram's; left alone (move it, then link again)",
        )
    if not dry_run:
        write(file.path, before, file.text)
        backup_path(file.path).unlink(missing_ok=True)  # our own text only
    action = "added" if before is None else "updated"
    return Result(file.target, file.shown, action, LABEL, diff(file.shown, before, file.text))


def unlink_rules(file: RuleFile, *, dry_run: bool) -> Result:
    try:
        before = read(file.path)
    except HostError as exc:
        return Result(file.target, file.shown, "error", exc.message)
    if before is None:
        return Result(file.target, file.shown, "absent", LABEL)
    if not _ours(before):
        return Result(
            file.target, file.shown, "skipped", f"{LABEL}: the file there is not engram's; left alone"
        )
    if not dry_run:
        file.path.unlink()
        backup_path(file.path).unlink(missing_ok=True)
        prune_empty(file.path.parent, file.base)
    return Result(file.target, file.shown, "removed", LABEL, diff(file.shown, before, None))


def installed(file: RuleFile) -> bool:
    """Whether engram's current rules are in place (doctor)."""
    try:
        return read(file.path) == file.text
    except HostError:
        return False
