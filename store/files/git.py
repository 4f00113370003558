"""One way to ask git something (code references, staleness, churn, history, what a pull
brought, the session hook's routing).

The rest, and why: docs/design.md, `store/files/git.py`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Final

TIMEOUT: Final = 10.0
"""Seconds a git call may take before it counts as failed."""

SAFE_OPTIONS: Final = (
    "safe.bareRepository=explicit",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "log.showSignature=false",
    "diff.external=",
    "core.sshCommand=false",
    "credential.helper=",
)
"""`-c` settings every call carries (the second belt; see the module docstring)."""

_KEPT_GIT_VARIABLES: Final = frozenset(("GIT_CONFIG_NOSYSTEM",))
"""The only `GIT_*` variables of the environment that reach git (they can only narrow it)."""


def repository(folder: Path) -> tuple[Path, Path] | None:
    """(`.git`, its working tree) of the repository holding `folder`: the nearest `.git` at or
    above it, found the way engram finds a workspace (store.files.workspace.is_git_root); None outside
    any repository. Never asks git, so no folder's files can make git choose another."""
    here = Path(os.path.abspath(folder))
    for candidate in (here, *here.parents):
        dot_git = candidate / ".git"
        if os.path.lexists(dot_git):
            return dot_git, candidate
    return None


def _inside(folder: str | None, work_tree: Path) -> bool:
    """`folder` (a variable's value) may lead into the working tree: a relative value (the host
    starts engram in the project), one under `/proc` or `/dev` (`/proc/self/cwd` is the project
    folder), or one inside the tree as written. Decided from the text alone: no file is looked
    at for it (a value leading elsewhere is not followed)."""
    if not folder:
        return False
    path = Path(os.path.normpath(os.path.expanduser(folder)))
    if not path.is_absolute() or path.parts[1:2] in (("proc",), ("dev",)):
        return True
    return path == work_tree or path.is_relative_to(work_tree)


def _environment(git_dir: Path, work_tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEPT_GIT_VARIABLES}
    # The user's global config is git's `$XDG_CONFIG_HOME/git/config` and `$HOME/.gitconfig`. A
    # host entry's env (which a clone's committed config can carry) pointing either into the
    # clone would make the clone's file git's global config, whose trace2 targets no `-c` can
    # override: then git reads no global config at all.
    if _inside(env.get("HOME"), work_tree) or _inside(env.get("XDG_CONFIG_HOME"), work_tree):
        env.pop("XDG_CONFIG_HOME", None)
        env["GIT_CONFIG_GLOBAL"] = os.devnull
    env.update(
        GIT_TRACE2="0",  # trace2 targets come from system and global config only; the
        GIT_TRACE2_EVENT="0",  # environment overrides them: no trace file is ever appended to
        GIT_TRACE2_PERF="0",
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_OPTIONAL_LOCKS="0",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_ALLOW_PROTOCOL="",  # no transport at all: a promisor remote cannot lazily fetch
        GIT_NO_LAZY_FETCH="1",  # (git 2.44 and later say so directly)
    )
    return env


def run_git(cwd: Path, *args: str, timeout: float = TIMEOUT) -> str | None:
    """git `args` in `cwd` (a folder inside a repository's working tree), against that
    repository named explicitly; None when there is none, or git fails."""
    found = repository(cwd)
    if found is None:
        return None
    git_dir, work_tree = found
    options = [part for option in SAFE_OPTIONS for part in ("-c", option)]
    try:
        done = subprocess.run(
            ["git", *options, *args],
            cwd=cwd,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=_environment(git_dir, work_tree),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None
