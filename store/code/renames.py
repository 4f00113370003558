"""Where git says a cited file went: the renames it recorded, committed and staged.

A memory that cites `redis.go` after `git mv redis.go counters.go` has lost nothing but a
path. Staleness asks this map only for a cited file that is gone, and churn asks it for the
former names of a file, so a pure rename is never counted as change.

Git's output is the clone's: read with `-z` (a name may hold any byte but NUL), each name kept
only when it is a plain relative path (no `..`, not absolute), and every name is looked at on
disk by the caller through the same link-checked path as any ref.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from store.files.git import run_git

MAX_RENAME_COMMITS: Final = 500
"""Commits with a rename that are read back (newest first): older moves are not followed."""
MAX_HOPS: Final = 20
"""Renames followed one after another from a cited path (a cycle a history can hold ends here)."""


@dataclass(frozen=True, slots=True)
class Move:
    """A cited path's newest name, and whether every rename on the way kept the content whole."""

    path: str
    pure: bool


def parse_moves(output: str) -> list[tuple[str, str, int]]:
    """(old, new, similarity %) of each entry of `--name-status -z --diff-filter=R` output (a
    run of `R<score>`, old, new), in git's order; parsing stops at anything else, since a name
    read out of step would be trusted as a status."""
    tokens = output.split("\0")
    moves = []
    for i in range(0, len(tokens) - 2, 3):
        status, old, new = tokens[i : i + 3]
        if not (status[:1] == "R" and status[1:].isdigit() and len(status) <= 4):
            break
        if _plain(old) and _plain(new):
            moves.append((old, new, int(status[1:])))
    return moves


def _plain(name: str) -> bool:
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and ".." not in parts and "\n" not in name


class Renames:
    """old path → (new path, similarity) from git, newest move last, for one git state."""

    def __init__(self, moves: list[tuple[str, str, int]]) -> None:
        self._next: dict[str, tuple[str, int]] = {}
        for old, new, score in moves:
            self._next[old] = (new, score)
            self._next.pop(new, None)  # a file moved back: its newer name is where it is now
        self._former: dict[str, list[str]] = {}
        for old in self._next:
            end = self.follow(old)
            if end is not None:
                self._former.setdefault(end.path, []).append(old)

    def follow(self, path: str) -> Move | None:
        """Where `path` went by git's renames (None when git recorded no move of it)."""
        if path not in self._next:
            return None
        pure, seen, current = True, {path}, path
        for _ in range(MAX_HOPS):
            found = self._next.get(current)
            if found is None:
                break
            current, score = found
            pure = pure and score == 100
            if current in seen:
                return None
            seen.add(current)
        return Move(current, pure)

    def former(self, path: str) -> list[str]:
        """The names `path` had before its renames, as far as git recorded them."""
        return list(self._former.get(path, ()))


def read(workspace: Path) -> Renames:
    """The renames of the workspace's history (its newest MAX_RENAME_COMMITS commits with one),
    then those staged in the index (`git mv` before a commit); names relative to `workspace`.
    Empty where git is not there or fails."""
    committed = run_git(
        workspace,
        "log",
        "-M",
        "--diff-filter=R",
        "--name-status",
        "-z",
        "--relative",
        "--no-textconv",
        "--no-ext-diff",
        "--format=",
        f"-n{MAX_RENAME_COMMITS}",
        "HEAD",
        "--",
    )
    staged = run_git(
        workspace,
        "diff",
        "--cached",
        "-M",
        "--diff-filter=R",
        "--name-status",
        "-z",
        "--relative",
        "--no-ext-diff",
        "HEAD",
        "--",
    )
    moves = parse_moves(committed or "")
    moves.reverse()  # git prints newest first; the map is built oldest first
    moves += parse_moves(staged or "")
    return Renames(moves)
