"""The store's health for `engram doctor`: what engram ignores, discards or cannot
read, each a Finding (engram_mcp.hosts.doctor.findings) with a stable code and the fix for a person.

The rest, and why: docs/design.md, `engram_mcp/hosts/doctor/health.py`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from engram_mcp.hosts.doctor.findings import Finding
from engram_mcp.hosts.targets import display_path, home_of
from store.config import CHECKED_NAME, CheckedConfigs, check_files
from store.errors import MESSAGE_LIMIT, Problem
from store.files.git import repository
from store.files.user_key import user_secret
from store.files.workspace import ScopeDir, engram_home, home_problem, project_dir, user_dir
from store.read.catalog import Catalog
from store.read.snapshot import Broken
from store.safety import untrusted
from store.write.state_check import StateProblem, check

INFORMATIONAL: Final = ("derived.rebuilt", "workspace.outside_git", "ui.memory_readable")
"""Codes doctor lists without failing (exit 0; engram_mcp.hosts.doctor.findings.INFORMATIONAL holds
them too); every other code here needs the person."""
MAX_MEMORY_FINDINGS: Final = 50
"""Memory files named one by one; the rest are counted in one finding."""


def findings(workspace: Path | None, env: Mapping[str, str]) -> list[Finding]:
    """Every health finding for this workspace (None: outside any, the user scope alone) and
    the user scope `env` names, in a stable order: home, config, memory files, state files,
    the workspace."""
    shown = _Shown(workspace, env)
    home = engram_home(env)
    found = _home(home, env, shown)
    usable_home = not any(f.code == "home.unusable" for f in found)
    scopes = [project_dir(workspace)] if workspace is not None else []
    scopes += [user_dir(env)] if usable_home else []
    found += _config(workspace, home, shown, usable_home)
    key = user_secret(home, create=False).key if usable_home else os.urandom(32)
    memories = 0
    for scope in scopes:
        catalog = Catalog(scope, persist=False, key=lambda: key, watch=False, background=False)
        snapshot = catalog.refresh()
        catalog.close()
        memories += len(snapshot.memories)
        found += _memory(scope, snapshot.problems, snapshot.broken, shown)
    for scope in scopes:
        if scope.root.is_dir() and not scope.root.is_symlink():
            found += [_state(problem, scope, shown) for problem in check(scope, key, memories=memories)]
    if workspace is not None and repository(workspace) is None:
        found.append(
            Finding(
                "workspace.outside_git",
                shown(workspace),
                "not in a git repository: its memories cannot be shared with a team or reviewed "
                "through git (engram works without it)",
                "run `git init` here if the project should be shared",
            )
        )
    found += _page_memory()
    return found


PTRACE_SCOPE: Final = Path("/proc/sys/kernel/yama/ptrace_scope")


def memory_reachable() -> str:
    """Why another process of the user can reach the review page's memory, or empty. `engram
    ui` shuts it (engram_mcp.ui.serve.sealed), but a process that may attach to the user's
    others (not Linux; on Linux, no Yama or `ptrace_scope` 0) can open the command's memory for
    writing while it starts and undo that, or change what it will make its secrets from, and
    read the terminal's and the browser's memory besides; Yama's scope 1 or more refuses it."""
    if not sys.platform.startswith("linux"):
        return f"{sys.platform} lets your processes debug each other"
    try:
        scope = PTRACE_SCOPE.read_text(encoding="ascii").strip()
    except OSError:
        scope = ""
    if scope not in ("", "0"):
        return ""
    return "no Yama ptrace scope" if scope == "" else "kernel.yama.ptrace_scope is 0"


def _page_memory() -> list[Finding]:
    why = memory_reachable()
    if not why:
        return []
    fix = "set kernel.yama.ptrace_scope to 1 (sysctl), or " if sys.platform.startswith("linux") else ""
    return [
        Finding(
            "ui.memory_readable",
            "engram ui",
            f"{why}: a process of yours can reach the review page's memory, which holds its approval "
            "code, so what the page saves is listed by `engram verify` until you accept it at your terminal",
            f"{fix}approve in your host's prompt or with `engram pending` at your terminal while an agent "
            'runs unattended as you; SECURITY.md, "The review page"',
        )
    ]


class _Shown:
    """Paths the way doctor shows them: ./… in the workspace, ~/… in the home folder."""

    def __init__(self, workspace: Path | None, env: Mapping[str, str]) -> None:
        self.home = home_of(env)
        self.workspace = workspace

    def __call__(self, path: Path) -> str:
        if self.workspace is not None:
            shown = display_path(path, self.workspace, self.home)
        elif path.is_relative_to(self.home):
            shown = f"~/{path.relative_to(self.home).as_posix()}"
        else:
            shown = str(path)
        return untrusted.line(shown, 1000)


def _home(home: Path, env: Mapping[str, str], shown: _Shown) -> list[Finding]:
    """$ENGRAM_HOME: missing when set (a typo?), or not a folder that can be read."""
    problem = home_problem(home)
    if problem is not None:
        return [_unusable_home(home, problem, shown)]
    if home.is_dir() or not env.get("ENGRAM_HOME"):
        return []  # the default folder before first use: made when first needed
    return [
        Finding(
            "home.missing",
            shown(home),
            "$ENGRAM_HOME names this folder and it does not exist: your user-scope memories "
            "and secret would be made there",
            f"create it (mkdir -p {shown(home)}) if that is meant, or set ENGRAM_HOME to your "
            "user scope's folder (unset, it is ~/.config/engram)",
        )
    ]


def _unusable_home(home: Path, why: str, shown: _Shown) -> Finding:
    return Finding(
        "home.unusable",
        shown(home),
        f"$ENGRAM_HOME {why}: user-scope memories, your config and the secret that tags engram's "
        "files cannot be used",
        "make it a folder you own (or point ENGRAM_HOME at one)",
    )


def _config(workspace: Path | None, home: Path, shown: _Shown, usable_home: bool) -> list[Finding]:
    """Both settings files as load_config takes them (store.config.check_files)."""
    checked = CheckedConfigs(home / CHECKED_NAME, writable=False) if usable_home else None
    project = (workspace if workspace is not None else home / "no-workspace") / ".engram" / "config.json"
    found: list[Finding] = []
    for file in check_files(home / "config.json", project, checked):
        if (workspace is None and file.label.startswith(".engram")) or (
            not usable_home and file.label.startswith("$ENGRAM_HOME")
        ):
            continue
        if file.ignored:
            why = "; ".join(_bare(problem, file.label) for problem in file.ignored)
            fallback = (
                "your $ENGRAM_HOME/config.json or the defaults"
                if file.label.startswith(".")
                else "the defaults"
            )
            found.append(
                Finding(
                    "config.ignored",
                    shown(file.path),
                    untrusted.line(
                        f"ignored as a whole ({why}): every setting in it falls back to {fallback}",
                        MESSAGE_LIMIT,
                    ),
                    "fix what is named (the settings are listed under Configuration in the README) or "
                    "delete the file; `engram status` shows the result",
                )
            )
        for problem in file.partly:
            found.append(
                Finding(
                    "config.setting_ignored",
                    shown(file.path),
                    untrusted.line(_bare(problem, file.label), MESSAGE_LIMIT),
                    "move the setting where the message says, and remove it here",
                )
            )
    return found


def _bare(problem: str, label: str) -> str:
    """A config problem without its file name (the finding names the file) or its advice."""
    text = str(problem).removeprefix(label).lstrip(": ")
    for tail in ("; the file is ignored until fixed", "; fix the file or delete it to use defaults"):
        text = text.removesuffix(tail)
    return text.rstrip(". ")


def _memory(
    scope: ScopeDir, problems: tuple[Problem, ...], broken: tuple[Broken, ...], shown: _Shown
) -> list[Finding]:
    """One finding per memory file engram leaves out (the first MAX_MEMORY_FINDINGS)."""
    named = {b.problem: b for b in broken}
    found = []
    for problem in problems[:MAX_MEMORY_FINDINGS]:
        file = named.get(problem)
        if file is not None:
            folder = scope.working_dir if file.tier == "working" else scope.memory_dir
            code = "memory.unparsed" if file.parsed else "memory.unreadable"
            found.append(
                Finding(
                    code,
                    shown(folder / f"{file.id}.md"),
                    f"{file.verdict}: {problem.message}",
                    "edit the file by hand until it parses (engram leaves it untouched), then run "
                    "`engram verify`"
                    if file.parsed
                    else "replace it with a regular memory file of at most 1 MiB, or remove it",
                )
            )
        else:
            found.append(
                Finding(
                    "memory.skipped",
                    problem.file,
                    f"{problem.message}; nothing of it is loaded",
                    "rename or remove what the message names",
                )
            )
    if len(problems) > MAX_MEMORY_FINDINGS:
        rest = len(problems) - MAX_MEMORY_FINDINGS
        found.append(
            Finding(
                "memory.skipped",
                shown(scope.memory_dir),
                f"{rest} more files cannot be used",
                "`engram verify` lists every one",
            )
        )
    return found


_STATE_FIX: Final = {
    "derived": (
        "derived.rebuilt",
        "nothing to do: engram rebuilds it from the memory files at its next read",
    ),
    "state": (
        "state.discarded",
        "nothing can bring it back: remove the file (engram makes a fresh one); if it came with a "
        "clone or a pull, keep it out of git (`engram init` writes the .gitignore that does)",
    ),
    "unsafe": ("state.unusable", "remove it: engram makes the file itself at the next write"),
}


def _state(problem: StateProblem, scope: ScopeDir, shown: _Shown) -> Finding:
    code, fix = _STATE_FIX[problem.kind]
    name = problem.file.rpartition("/")[2]
    return Finding(code, shown(scope.root / name), untrusted.line(problem.message, MESSAGE_LIMIT), fix)
