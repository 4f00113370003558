"""Glob patterns of `paths` and `refs`, matched in time linear in the pattern and the path.

The rest, and why: docs/design.md, `store/code/globs.py`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Final

from store.files.fs_platform import slashed

MAX_INNER_GLOBSTARS: Final = 3
"""`**` inside one name beyond this many are read as `*` (each one doubles the alternatives)."""
_ANY: Final = "**"
_STARS: Final = re.compile(r"\*{3,}")

Segment = Callable[[str], object]
"""Matches one folder or file name."""


def _name_matcher(segment: str) -> Segment:
    if segment == "*":
        return lambda name: name
    if not any(ch in segment for ch in "*?"):
        return segment.__eq__
    escaped = segment.replace("[", "[[]")
    return re.compile(fnmatch.translate(escaped), re.S).match


def _alternatives(pattern: str) -> list[list[str]]:
    """The pattern's segments, with each `**` inside a name expanded into its two readings
    (`L**R`: the name `L*R`, or `L*`, any folders, `*R`)."""
    found: list[list[str]] = [[]]
    inner = 0
    for segment in _STARS.sub("**", pattern).split("/"):
        if segment == _ANY or "**" not in segment:
            for alt in found:
                if not (segment == _ANY and alt and alt[-1] == _ANY):
                    alt.append(segment)
            continue
        inner += 1
        if inner > MAX_INNER_GLOBSTARS:
            for alt in found:
                alt.append(segment.replace("**", "*"))
            continue
        left, _, right = segment.partition("**")
        expanded: list[list[str]] = []
        for alt in found:
            expanded.append([*alt, f"{left}*{right}"])
            expanded.append([*alt, f"{left}*", _ANY, f"*{right}"])
        found = expanded
    return found


@lru_cache(maxsize=4096)
def compiled(pattern: str) -> tuple[tuple[Segment | None, ...], ...]:
    """Each alternative of `pattern` as its segments' matchers (None for a `**` segment)."""
    return tuple(
        tuple(None if s == _ANY else _name_matcher(s) for s in alt) for alt in _alternatives(pattern)
    )


def _matches(segments: tuple[Segment | None, ...], names: list[str]) -> bool:
    reached = {0}
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment is None:
            start = min(reached) + (1 if index == last else 0)
            reached = set(range(start, len(names) + 1))
        else:
            reached = {at + 1 for at in reached if at < len(names) and segment(names[at])}
        if not reached:
            return False
    return len(names) in reached


def glob_match(path: str, pattern: str) -> bool:
    """Whether the workspace-relative `path` matches `pattern` (see the module docstring)."""
    names = slashed(path).removeprefix("./").split("/")
    return any(_matches(alt, names) for alt in compiled(slashed(pattern)))
