"""Git as the sharing engine: which memory files arrived through git (a pull, merge or checkout).

Only `memory/*.md` (and `config.json`) travel through git; every derived file is gitignored
and rebuilt (SPEC §2), so two branches that touch different memories merge without a
conflict, and each `git worktree` is a workspace of its own with its own derived files.

After a pull, `verify` names the memories that are new or changed since the last review and
match the commit checked out (tracked, no difference from HEAD): they arrived through git and
are listed once, under their own heading, for review; `engram verify --accept` records them.
A file that differs from HEAD is a local edit and stays under "edited outside engram".
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from store.git import run_git


def arrived(workspace: Path, memory_dir: Path, ids: Iterable[str]) -> set[str]:
    """The ids among `ids` whose `memory/<id>.md` is tracked and identical to HEAD."""
    wanted = set(ids)
    if not wanted or not memory_dir.is_dir():
        return set()
    try:
        folder = memory_dir.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return set()
    tracked = run_git(workspace, "ls-files", "-z", "--", folder)
    differing = run_git(
        workspace,
        "diff",
        "--no-textconv",
        "--no-ext-diff",
        "--name-only",
        "--relative",
        "-z",
        "HEAD",
        "--",
        folder,
    )
    if tracked is None or differing is None:
        return set()
    changed = set(differing.split("\0"))
    return {
        name[len(folder) + 1 : -3]
        for name in tracked.split("\0")
        if name.endswith(".md") and name not in changed and name[len(folder) + 1 : -3] in wanted
    }
