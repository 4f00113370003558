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

import hashlib
from collections.abc import Iterable
from pathlib import Path

from store.files.git import run_git


def arrived(workspace: Path, memory_dir: Path, ids: Iterable[str]) -> set[str]:
    """The ids among `ids` whose `memory/<id>.md` is tracked and identical to HEAD.

    "Identical" compares the file's bytes with HEAD's blob id, hashed here: asking git to diff
    the working tree would run the clean filter `.gitattributes` names for the file (a filter
    the repository's config defines is a program). A file a filter would change reads as a
    local edit, which only lists it under "edited outside engram" instead."""
    wanted = set(ids)
    if not wanted or not memory_dir.is_dir():
        return set()
    try:
        folder = memory_dir.resolve().relative_to(workspace.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):  # outside the workspace, or a link loop
        return set()
    listed = run_git(workspace, "ls-tree", "-r", "-z", "HEAD", "--", folder)
    if listed is None:
        return set()
    found = set()
    for entry in listed.split("\0"):
        meta, _, name = entry.partition("\t")
        parts = meta.split()
        if (
            len(parts) != 3
            or parts[1] != "blob"
            or not name.startswith(folder + "/")
            or not name.endswith(".md")
        ):
            continue
        memory_id = name[len(folder) + 1 : -3]
        if memory_id in wanted and _blob_id(memory_dir / f"{memory_id}.md", len(parts[2])) == parts[2]:
            found.add(memory_id)
    return found


def _blob_id(path: Path, length: int) -> str | None:
    """git's id of the file's bytes as a blob (sha1, or sha256 in a repository of that format)."""
    try:
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None
    if data is None:
        return None
    digest = hashlib.sha256() if length == 64 else hashlib.sha1()  # noqa: S324 - git's own id
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()
