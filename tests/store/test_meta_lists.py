"""The names in `tags`, `paths`, `roles` and `supersedes` are looked at all at once first: the
verdict on each list is the one a look at every name gives, whichever name holds the character
and wherever in it (a joiner at a name's edge meets the joining space, and is refused there too)."""

from __future__ import annotations

import json

import pytest

from store.errors import CorruptMemory
from store.files.memory import parse_memory


def _parse(tags: list[str], refs: list[str] | None = None) -> None:
    front = f"id: m-one\ntype: fact\ntitle: One\ntags: {json.dumps(tags)}\n"
    if refs is not None:
        front += f"refs: {json.dumps(refs)}\n"
    parse_memory(f"---\n{front}---\nbody\n".encode(), file_id="m-one", scope="project", tier="durable")


@pytest.mark.parametrize(
    ("tags", "refused"),
    [
        (["api", "billing"], None),
        (["a\u200db"], None),  # a joiner between two letters is kept
        (["api", "b\u200d"], "a character a reader cannot see"),
        (["a\u200d", "b"], "a character a reader cannot see"),
        (["a", "\u200db"], "a character a reader cannot see"),
        (["ok", "zero\u200bwidth"], "a character a reader cannot see"),
        (["ok", "line\nbreak"], "control character"),
        (["ok", "nul\x00"], "control character"),
        (["größe", "文字"], None),
        ([], None),
    ],
)
def test_each_name_is_judged_as_if_alone(tags: list[str], refused: str | None) -> None:
    if refused is None:
        _parse(tags)
    else:
        with pytest.raises(CorruptMemory, match=refused):
            _parse(tags)


def test_refs_are_left_to_the_staleness_check() -> None:
    _parse(["ok"], refs=["src/a.py\u200b", "tab\there"])
