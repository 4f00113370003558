"""The one-line-per-key fast path of front-matter parsing gives exactly what YAML gives, or
leaves the block to YAML."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from store.errors import CorruptMemory
from store.files import front_yaml
from store.files.memory import split_front_matter
from tests.support.paths import REPO

KEYS = ["id", "type", "title", "tags", "always", "on", "yes", "y", "null", "Null", "x_1", "<<", "created"]
PIECES = [
    "a", "Use uv", "é", "0", "12", "-3", "+4", "1_0", "0x1F", "0o7", "1.5", ".inf", "1e3", "1:30",
    "true", "False", "yes", "off", "~", "null", "=", ": ", ":", " #", "#", "C#", "[", "]", "{", "}",
    ",", ", ", "'", '"', "-", "? ", "?", "*", "&", "!", "%", "@", "`", "|", ">", "<<", " ", "  ", "\t",
    "\u2028", "\x85", "\ufeff", "\\", "\\n", "''", '"', '"a"', "2026-10-01T10:00:00Z", "2026-10-01", "src/a.py#fn", "**/*.py",
]  # fmt: skip


def _full(block: str) -> Any:
    """What the strict YAML loader makes of the block (the fast path bypassed)."""
    return yaml.load(block, Loader=front_yaml._Loader)  # noqa: S506 - engram's safe loader


plain = st.lists(st.sampled_from(PIECES), min_size=0, max_size=3).map("".join)
values = st.one_of(plain, plain.map(lambda v: f'"{v}"'), plain.map(lambda v: f"'{v}'"))
lists = st.lists(values, max_size=4).map(lambda items: "[" + ", ".join(items) + "]")
lines = st.tuples(st.sampled_from(KEYS), st.one_of(values, lists)).map(lambda kv: f"{kv[0]}: {kv[1]}")


def _agrees(block: str) -> bool:
    """The fast path's answer is YAML's, or it stepped aside; True when it answered."""
    fast = front_yaml._simple(block)
    try:
        full = _full(block)
    except (yaml.YAMLError, CorruptMemory):  # an error (a repeated key among them) is YAML's to report
        assert fast is None, block
        return False
    if fast is not None:
        assert fast == full, block
        assert [type(v) for v in fast.values()] == [type(v) for v in full.values()], block
    return fast is not None


def test_every_pair_of_pieces_in_every_position_agrees_with_yaml() -> None:
    pairs = [a + b for a in PIECES for b in PIECES] + [f"a{p}b" for p in PIECES]
    forms = ("k: {}", "k: [{}]", "k: [x, {}]", 'k: "{}"', "k: '{}'", "{}: v", "z: '&x'\nk: [{}]")
    answered = sum(_agrees(form.format(value) + "\n") for value in pairs for form in forms)
    assert answered > len(pairs)  # the fast path answers a good share of them


@settings(max_examples=300, deadline=None)
@given(st.lists(lines, min_size=1, max_size=3))
def test_blocks_of_several_lines_agree_with_yaml(block_lines: list[str]) -> None:
    _agrees("\n".join(block_lines) + "\n")


@pytest.mark.parametrize(
    "block",
    [
        "title: Note: this\n",  # a mapping inside a plain scalar: YAML's error
        "title: keep # a comment\n",
        "tags:\n  - a\n",
        "title: 'it''s'\n",
        'title: "a \\" b"\n',
        'title: "tab\\there"\n',
        "n: 0x1F\n",
        "on: yes\n",
        "id: a\nid: b\n",
        "title: trailing \n",
        "k" * 1030 + ": v\n",  # longer than YAML allows a key
        "title: Q&A\ntags: [why?]\n",  # the strict loader refuses `?` in a flow list
        "tags: [a:?]\n",  # the pure-Python scanner ends a flow scalar at `?`
    ],
)
def test_forms_outside_the_fast_path_go_to_yaml(block: str) -> None:
    assert front_yaml._simple(block) is None


def test_every_fixture_memory_parses_the_same_and_engrams_own_form_takes_the_fast_path() -> None:
    files = sorted((REPO / "fixtures").rglob(".engram/*/*.md"))
    assert len(files) > 20
    fast = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---\n") or "\n---\n" not in text:
            continue
        block = text[4 : text.index("\n---\n", 3) + 1]
        simple = front_yaml._simple(block)
        if simple is not None:
            fast += 1
            assert simple == _full(block), path
            assert split_front_matter(text)[0] == simple
    assert fast >= len(files) * 3 // 4  # the speed is not silently lost
