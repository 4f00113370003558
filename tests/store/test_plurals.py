"""Numbers agree with their nouns (issue 22)."""

from __future__ import annotations

import pytest

from store.plurals import count


@pytest.mark.parametrize(
    ("n", "noun", "shown"),
    [
        (0, "memory", "0 memories"),
        (1, "memory", "1 memory"),
        (2, "memory", "2 memories"),
        (1, "body", "1 body"),
        (3, "body", "3 bodies"),
        (2, "stale memory", "2 stale memories"),
        (1, "file", "1 file"),
        (2, "file", "2 files"),
        (2, "day", "2 days"),
        (2, "match", "2 matches"),
        (1000, "memory", "1,000 memories"),
    ],
)
def test_count_agrees_with_its_noun(n: int, noun: str, shown: str) -> None:
    assert count(n, noun) == shown


def test_count_takes_an_irregular_plural() -> None:
    assert count(2, "person", "people") == "2 people"
