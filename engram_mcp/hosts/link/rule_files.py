"""The shell-rule files engram owns whole: Codex's `engram.rules`, Gemini CLI's `engram.toml`
(shell_rules.py has their text). `link` writes one, `unlink` removes it and the folders it
left empty; a file at that path without engram's mark is the user's and is left alone."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engram_mcp.hosts.edits import Result, diff, drop_backup, prune_empty, read, write
from engram_mcp.hosts.errors import HostError
from engram_mcp.hosts.gate import shell_rules
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
    scope: str
    """workspace (committed with the project) or global (the user's own folders)"""
    bare_text: str
    """The text naming the bare `engram` and `engram-mcp` only (what a committed file has)."""


def rule_file(
    target: str, global_: bool, workspace: Path, env: Mapping[str, str] = os.environ
) -> RuleFile | None:
    """The rules file `engram link target` writes at this scope, or None."""
    home = home_of(env)
    if target == "codex":
        folder = codex_home(env) if global_ else workspace / ".codex"
        path = folder / "rules" / shell_rules.CODEX_FILE
        base = workspace if not global_ else home if folder.is_relative_to(home) else folder
        scope = "global" if global_ else "workspace"
        shown = display_path(path, workspace, home)
        text, bare = shell_rules.codex_text(), shell_rules.codex_text(bare=True)
        return RuleFile(target, path, shown, text, base, scope, bare)
    if target == "gemini":  # Gemini CLI 0.61 loads no workspace policies: the user folder, both scopes
        path = home / ".gemini" / "policies" / shell_rules.GEMINI_FILE
        shown = display_path(path, workspace, home)
        text, bare = shell_rules.gemini_text(), shell_rules.gemini_text(bare=True)
        return RuleFile(target, path, shown, text, home, "global", bare)
    return None


def _ours(text: str) -> bool:
    return shell_rules.MARK in text


def link_rules(file: RuleFile, *, dry_run: bool) -> Result:
    try:
        before = read(file.path)
    except HostError as exc:
        return Result(file.target, file.shown, "error", exc.message, code=exc.code)
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
        in_workspace = file.scope == "workspace"
        write(file.path, before, file.text, in_workspace=in_workspace)
        drop_backup(file.path, in_workspace=in_workspace)  # our own text only
    action = "added" if before is None else "updated"
    return Result(file.target, file.shown, action, LABEL, diff(file.shown, before, file.text))


def unlink_rules(file: RuleFile, *, dry_run: bool) -> Result:
    try:
        before = read(file.path)
    except HostError as exc:
        return Result(file.target, file.shown, "error", exc.message, code=exc.code)
    if before is None:
        return Result(file.target, file.shown, "absent", LABEL)
    if not _ours(before):
        return Result(
            file.target, file.shown, "skipped", f"{LABEL}: the file there is not engram's; left alone"
        )
    if not dry_run:
        file.path.unlink()
        drop_backup(file.path, in_workspace=file.scope == "workspace")
        prune_empty(file.path.parent, file.base)
    return Result(file.target, file.shown, "removed", LABEL, diff(file.shown, before, None))


def installed(file: RuleFile) -> bool:
    """Whether engram's current rules are in place (doctor): as link writes them now, or as it
    wrote them while PATH found this installation (the bare names)."""
    try:
        return read(file.path) in (file.text, file.bare_text)
    except HostError:
        return False
