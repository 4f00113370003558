"""Memory ids (SPEC §2): `[a-z0-9][a-z0-9-]{0,63}`, refused before any path is built."""

from __future__ import annotations

import pytest

from store.errors import InvalidId
from store.files.ids import check_id, is_valid_id, slugify, unique_id


@pytest.mark.parametrize("value", ["a", "0", "use-uv-for-python", "x" * 64, "a-", "9-lives"])
def test_valid_ids_are_accepted(value: str) -> None:
    """Lower-case letters, digits and '-', 1-64 characters, not starting with '-'."""
    assert is_valid_id(value)
    assert check_id(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "",
        "../../etc/passwd",
        "/abs",
        "a/b",
        "a\\b",
        "a\x00b",
        "Upper",
        "UPPER",
        "x" * 65,
        "-leading",
        "a_b",
        "a.md",
        "a b",
        "\u0430bc",  # Cyrillic 'а'
        "abc\n",
        "ａbc",  # full-width a
        None,
        42,
        ["a"],
    ],
)
def test_invalid_ids_are_refused(value: object) -> None:
    """Path tricks, upper case, over-long and look-alike ids are refused with ENGRAM_VALIDATION."""
    assert not is_valid_id(value)
    with pytest.raises(InvalidId) as caught:
        check_id(value)
    assert caught.value.code == "ENGRAM_VALIDATION"


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Use uv for Python environments", "use-uv-for-python-environments"),
        ("  Café — naïve résumé!  ", "cafe-naive-resume"),
        ("snake_case & camelCase", "snake-case-camelcase"),
        ("!!!", "memory"),
        ("日本語", "memory"),
    ],
)
def test_slugify_folds_to_a_valid_id(title: str, slug: str) -> None:
    """A title becomes an ASCII, lower-case, dash-joined id."""
    assert slugify(title) == slug
    assert is_valid_id(slug)


def test_slugify_stays_within_64_characters() -> None:
    """Long titles are cut to 64 characters without a trailing dash."""
    slug = slugify("word " * 40)
    assert len(slug) <= 64
    assert is_valid_id(slug)
    assert not slug.endswith("-")


def test_unique_id_adds_2_then_3() -> None:
    """A taken id gets -2, then -3."""
    assert unique_id("a", set()) == "a"
    assert unique_id("a", {"a"}) == "a-2"
    assert unique_id("a", {"a", "a-2"}) == "a-3"


def test_unique_id_keeps_the_64_character_limit() -> None:
    """The suffix replaces the end of a 64-character base instead of overflowing it."""
    base = "x" * 64
    first = unique_id(base, {base})
    assert first == "x" * 62 + "-2"
    assert len(first) == 64 and is_valid_id(first)
    taken = {base} | {"x" * 62 + f"-{n}" for n in range(2, 10)}
    tenth = unique_id(base, taken)
    assert tenth == "x" * 61 + "-10"
    assert is_valid_id(tenth)
