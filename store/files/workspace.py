"""Where memory lives: the workspace root (SPEC §2) and the user scope under ENGRAM_HOME.

A repository is untrusted input, so a scope is only used while it stays inside itself: the
project's `.engram/` must resolve inside the workspace, `memory/` and `working/` inside the scope
root (ENGRAM_HOME itself may live under a symlinked folder: its root is resolved first), and the
state files engram keeps there are never symbolic links at all — engram writes them by rename
or append, so a link would let a clone aim those writes (or the lock file's truncation) at any
file of the user. `check_scope` raises ENGRAM_UNSAFE_PATH for writes; reads report the folder
as unusable and load nothing from it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from store.errors import NoWorkspace, UnsafePath
from store.files.fsutil import read_regular, write_atomic

ENGRAM_DIR: Final = ".engram"
GITIGNORE_LINES: Final = (
    "working/",
    "index.json",
    "search.idx",
    "seals.log",
    "usage.json",
    "vectors.bin",
    "pending-approvals.json",
    "journal.json",
    "*.lock",
    ".*.tmp",
)
"""Every derived and state file (SPEC §2): only memory/ and config.json travel through git."""
STATE_FILES: Final = (
    "index.json",
    "search.idx",
    "seals.log",
    "usage.json",
    "vectors.bin",
    "pending-approvals.json",
    "journal.json",
    "config-checked.json",
    "engram.lock",
)
"""Files engram keeps for itself in a scope root; anything but a regular file in their place (a
link, a folder, a FIFO) is refused for writes and treated as absent by reads.
(`config.json` and `.gitignore` are the user's too: engram replaces them by rename, never
writing through a link, and a `.gitignore` that is a link is left alone.)"""


@dataclass(frozen=True, slots=True)
class ScopeDir:
    """One `.engram/`-shaped folder: the workspace's (`project`) or ENGRAM_HOME (`user`)."""

    scope: str
    root: Path
    label: str
    """How files of this scope are named to users: `.engram` or `$ENGRAM_HOME`."""
    base: Path | None = None
    """The folder the root must resolve inside (the workspace, for `.engram/`)."""

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

    @property
    def seals_path(self) -> Path:
        return self.root / "seals.log"

    @property
    def search_path(self) -> Path:
        return self.root / "search.idx"

    @property
    def journal_path(self) -> Path:
        return self.root / "journal.json"

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


def home_problem(home: Path) -> str | None:
    """Why `$ENGRAM_HOME` cannot be used, or None: a folder this user can read, or nothing at
    all yet (it is made on first need). A file, a link loop (`ENGRAM_HOME` linked to itself), a
    link to nothing or a folder the user cannot read is a problem: the user scope, its config and
    the secret that tags engram's files live there (doctor's `home.unusable`, the store's notice)."""
    try:
        mode = os.stat(home).st_mode
    except FileNotFoundError:
        return "is a symbolic link to nothing" if os.path.lexists(home) else None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"
    if not stat.S_ISDIR(mode):
        return "is not a folder"
    if not os.access(home, os.R_OK | os.X_OK):
        return "cannot be read by you"
    return None


def find_workspace(cwd: Path, explicit: str | None = None, env: Mapping[str, str] = os.environ) -> Path:
    """The workspace root (SPEC §2): `--workspace` / ENGRAM_WORKSPACE, else discovered from `cwd`.

    Discovery never crosses a git root. Inside a repository the nearest folder holding
    `.engram/` between `cwd` and the repository's root (both included) wins, else the root
    itself: an `.engram/` above the root belongs to another project (a checkout inside a
    monorepo, a vendored project, a scratch repository under a home folder), so a nested
    repository never reads or writes its parent's memory. Outside any repository the nearest
    ancestor holding `.engram/` wins, else `cwd`.

    Raises:
        NoWorkspace: the folder named explicitly does not exist (it is never created).
    """
    chosen = explicit or env.get("ENGRAM_WORKSPACE")
    if chosen:
        named = Path(chosen).expanduser().resolve()
        if not named.is_dir():
            raise NoWorkspace(
                f"the workspace {chosen!r} is not an existing folder; engram does not create it: "
                "name the project's folder, or create it and run `engram init` there"
            )
        return named
    here = cwd.resolve()
    chain = [here, *here.parents]
    root = next((folder for folder in chain if is_git_root(folder)), None)
    inside = chain if root is None else chain[: chain.index(root) + 1]
    for folder in inside:
        if (folder / ENGRAM_DIR).is_dir():
            return folder
    return root or here


def is_git_root(folder: Path) -> bool:
    """`folder` holds `.git` (a folder, or the file of a worktree or submodule)."""
    return os.path.lexists(folder / ".git")


def write_refusal(workspace: Path) -> str | None:
    """Why nothing may be written in `workspace`, or None: a write needs an initialised
    workspace (`.engram/` present) or a git root, where the first write creates `.engram/`.
    Anywhere else a write would plant a memory folder nobody asked for."""
    if (workspace / ENGRAM_DIR).is_dir() or is_git_root(workspace):
        return None
    return (
        "no engram workspace here: this folder has no .engram/ and is not the root of a git "
        "repository; run `engram init` in the project's folder first (or name it with "
        "--workspace DIR); nothing was written"
    )


def project_dir(workspace: Path) -> ScopeDir:
    return ScopeDir("project", workspace / ENGRAM_DIR, ENGRAM_DIR, workspace)


def user_dir(env: Mapping[str, str] = os.environ) -> ScopeDir:
    return ScopeDir("user", engram_home(env), "$ENGRAM_HOME")


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _leads_inside(link: Path, folder: Path) -> bool:
    """Whether `link`, resolved, stays inside `folder` (resolved too). A link that cannot be
    resolved (a loop such as `.engram -> .engram`: RuntimeError on Python 3.11, OSError later)
    is taken as leading outside: refused like one, never a traceback."""
    try:
        return _within(link.resolve(), folder.resolve())
    except (OSError, RuntimeError):
        return False


def _shown(scope: ScopeDir, path: Path) -> str:
    return scope.label if path == scope.root else scope.display(path)


def unsafe(scope: ScopeDir, folder: Path | None = None) -> str | None:
    """Why this scope (or one of its folders) must not be used, naming the path and the fix;
    None when it stays inside itself. Costs an lstat per path; resolves only links."""
    root = scope.root
    leaves = scope.base is not None and root.is_symlink() and not _leads_inside(root, scope.base)
    if leaves:
        return (
            f"{scope.label} is a symbolic link to a folder outside the workspace; engram does not "
            f"read or write through it. Replace the link with a real {scope.label} folder"
        )
    folders = (folder,) if folder is not None else (scope.memory_dir, scope.working_dir)
    for sub in folders:
        if sub.is_symlink() and not _leads_inside(sub, root):
            return (
                f"{_shown(scope, sub)} is a symbolic link leading outside {scope.label}; engram does not "
                f"read or write through it. Replace the link with a real folder holding the files"
            )
    return None


def check_scope(scope: ScopeDir) -> None:
    """Before a write: UnsafePath when the scope's root, folders or state files lead elsewhere."""
    reason = unsafe(scope)
    if reason is not None:
        raise UnsafePath(reason + "; nothing was written")
    for name in STATE_FILES:
        reason = state_file_problem(scope, name)
        if reason is not None:
            raise UnsafePath(reason + "; nothing was written")


def state_file_problem(scope: ScopeDir, name: str) -> str | None:
    """Why the entry at a state file's path must not be written (a link, a folder, a FIFO, a
    device or a socket: any entry that is not a regular file), naming the fix; None when it is
    absent or a regular file. One lstat, so a clone's folder at `journal.json` is found before
    any write, and reads treat such an entry as absent."""
    path = scope.root / name
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    shown = _shown(scope, path)
    if stat.S_ISLNK(mode):
        what = "is a symbolic link; engram keeps this file itself and never writes through a link"
    else:
        what = "is not a regular file (a folder, FIFO or device); engram keeps this file itself"
    return f"{shown} {what}. Remove {shown}; engram rebuilds it"


def init_scope(scope: ScopeDir) -> list[str]:
    """Create the folders and `.gitignore` of a scope; return what was created (idempotent).
    An existing `.gitignore` missing some of engram's lines gets them appended."""
    check_scope(scope)
    created: list[str] = []
    for folder in (scope.root, scope.memory_dir, scope.working_dir):
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            created.append(scope.display(folder) if folder != scope.root else scope.label)
    changed = ensure_gitignore(scope)
    if changed:
        created.append(changed)
    return created


def ensure_gitignore(scope: ScopeDir) -> str | None:
    """Write `.gitignore`, or append the lines an existing one lacks (its own lines kept);
    the name shown when it changed. A `.gitignore` that is not a regular file is left alone."""
    gitignore = scope.root / ".gitignore"
    try:
        text = read_regular(gitignore, 1 << 20).decode("utf-8", "replace")
    except FileNotFoundError:
        text = None
    except OSError:  # a link, a FIFO, unreadable: check_scope refuses writes; never follow it
        return None
    if text is None:
        body = "# written by engram: derived and private files\n" + "\n".join(GITIGNORE_LINES) + "\n"
        write_atomic(gitignore, body.encode())
        return scope.display(gitignore)
    have = {line.strip() for line in text.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in have]
    if not missing:
        return None
    joint = "" if not text or text.endswith("\n") else "\n"
    body = text + joint + "# added by engram: derived and private files\n" + "\n".join(missing) + "\n"
    write_atomic(gitignore, body.encode())
    return scope.display(gitignore)
