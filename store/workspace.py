"""Where memory lives: the workspace root (SPEC §2) and the user scope under ENGRAM_HOME."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ENGRAM_DIR: Final = ".engram"
GITIGNORE_LINES: Final = (
    "working/",
    "index.json",
    "usage.json",
    "pending-approvals.json",
    "*.lock",
    ".*.tmp",
)


@dataclass(frozen=True, slots=True)
class ScopeDir:
    """One `.engram/`-shaped folder: the workspace's (`project`) or ENGRAM_HOME (`user`)."""

    scope: str
    root: Path
    label: str
    """How files of this scope are named to users: `.engram` or `$ENGRAM_HOME`."""

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def working_dir(self) -> Path:
        return self.root / "working"

    @property
    def index_path(self) -> Path:
        return self.root / "index.json"

    @property
    def usage_path(self) -> Path:
        return self.root / "usage.json"

    @property
    def pending_path(self) -> Path:
        return self.root / "pending-approvals.json"

    @property
    def config_path(self) -> Path:
        return self.root / "config.json"

    @property
    def lock_path(self) -> Path:
        return self.root / "engram.lock"

    def display(self, path: Path) -> str:
        """A file name safe to show: relative to this scope, never an absolute machine path."""
        text, root = str(path), str(self.root)
        if text.startswith(root + os.sep):
            return f"{self.label}/{text[len(root) + 1 :].replace(os.sep, '/')}"
        return path.name


def engram_home(env: Mapping[str, str] = os.environ) -> Path:
    """`$ENGRAM_HOME`, else `~/.config/engram`."""
    explicit = env.get("ENGRAM_HOME")
    if explicit:
        return Path(explicit).expanduser()
    return Path(env.get("HOME") or Path.home()).expanduser() / ".config" / "engram"


def find_workspace(cwd: Path, explicit: str | None = None, env: Mapping[str, str] = os.environ) -> Path:
    """`--workspace` / ENGRAM_WORKSPACE, else the nearest ancestor holding `.engram/`,
    else the nearest git root, else `cwd`."""
    chosen = explicit or env.get("ENGRAM_WORKSPACE")
    if chosen:
        return Path(chosen).expanduser().resolve()
    here = cwd.resolve()
    chain = [here, *here.parents]
    for folder in chain:
        if (folder / ENGRAM_DIR).is_dir():
            return folder
    for folder in chain:
        if (folder / ".git").exists():
            return folder
    return here


def project_dir(workspace: Path) -> ScopeDir:
    return ScopeDir("project", workspace / ENGRAM_DIR, ENGRAM_DIR)


def user_dir(env: Mapping[str, str] = os.environ) -> ScopeDir:
    return ScopeDir("user", engram_home(env), "$ENGRAM_HOME")


def init_scope(scope: ScopeDir) -> list[str]:
    """Create the folders and `.gitignore` of a scope; return what was created (idempotent)."""
    from store.fsutil import write_atomic

    created: list[str] = []
    for folder in (scope.root, scope.memory_dir, scope.working_dir):
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            created.append(scope.display(folder) if folder != scope.root else scope.label)
    gitignore = scope.root / ".gitignore"
    if not gitignore.exists():
        text = "# written by engram: derived and private files\n" + "\n".join(GITIGNORE_LINES) + "\n"
        write_atomic(gitignore, text.encode())
        created.append(scope.display(gitignore))
    return created
