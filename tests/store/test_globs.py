"""Glob matching costs time linear in the pattern and the path (issue 19: a clone's ref of forty
stars and a `Z` hung every read), and means what it meant before on every ordinary pattern."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from store.code.globs import glob_match


def _old_regex(pattern: str) -> re.Pattern[str]:
    """The translation engram used before (backtracking, but the meaning to keep)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


PATTERNS = [
    "api/billing/**",
    "**/*.py",
    "api/**/*.py",
    "web/src/**/*.tsx",
    "tests/**/test_*.py",
    "*.md",
    "docs/*",
    "src/**.py",
    "**/b/**",
    "a/**/b/**/c",
    "?.txt",
    "a?c/*",
    "**",
    "src/[x]/*.py",
    "*a*b*",
    "**/*/**",
]
PATHS = [
    "api/billing/tax.py",
    "api/tax.py",
    "tax.py",
    "web/src/app/page.tsx",
    "web/src/page.tsx",
    "tests/unit/test_api.py",
    "tests/test_api.py",
    "README.md",
    "docs/guide/intro.md",
    "docs/intro.md",
    "src/a/b.py",
    "src/b.py",
    "a/b/c",
    "a/x/b/y/c",
    "a/b/x",
    "x.txt",
    "abc/d",
    "src/[x]/m.py",
    "xaybz",
    "b/b/b",
]


@pytest.mark.parametrize(("pattern", "path"), list(itertools.product(PATTERNS, PATHS)))
def test_every_ordinary_pattern_means_what_it_meant(pattern: str, path: str) -> None:
    assert glob_match(path, pattern) is (_old_regex(pattern).fullmatch(path) is not None)


def test_generated_patterns_mean_what_they_meant() -> None:
    """Whole-segment `**` and names of `*`, `?` and letters, in every mix (a `**` inside a name
    is checked by the list above: the old translation read `a**/` as `a` and any folders)."""
    rng = random.Random(19)
    segments = ["a", "b", "*", "**", "?", "a*", "*.py", "?b", "a*b", "*a*", "b?"]
    names = ["a", "b", "ab", "ba", "a.py", "b.py", "aab"]
    for _ in range(3000):
        pattern = "/".join(rng.choice(segments) for _ in range(rng.randint(1, 4)))
        path = "/".join(rng.choice(names) for _ in range(rng.randint(1, 4)))
        assert glob_match(path, pattern) is (_old_regex(pattern).fullmatch(path) is not None), (pattern, path)


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*" * 40 + "Z", "a" * 60),
        ("**/" * 40 + "Z", "/".join(["a"] * 60)),
        ("*a" * 30 + "Z", "a" * 80),
        ("**a" * 30 + "Z", "a/" * 40 + "a"),
        ("?*" * 50 + "Z", "b" * 100),
    ],
)
def test_patterns_that_backtrack_exponentially_are_answered(pattern: str, path: str) -> None:
    """Each of these took minutes (or forever) with the old translation; a name that ends in
    the `Z` still matches where the pattern can say so within its names."""
    assert glob_match(path, pattern) is False
    if "/" not in path:
        assert glob_match(path + "Z", pattern) is ("?" not in pattern or len(path) >= 50)
