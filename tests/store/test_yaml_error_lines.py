"""A front-matter YAML error names the file's own line (1-based, the opening `---` is line 1),
wherever the error is: YAML notices an unclosed list, quote or key only on the line after it,
and that later line was reported."""

from __future__ import annotations

import re

import pytest

from store.errors import CorruptMemory
from store.files.memory import split_front_matter

GOOD = ["id: use-uv", "type: rule", "title: Use uv for Python", "tags: [python, tooling]"]
BAD = {
    "an unclosed list": "tags: [python, tooling",
    "an unclosed mapping": "owner: {team: billing",
    "an unclosed double quote": 'title: "Use uv for Python',
    "an unclosed single quote": "title: 'Use uv for Python",
    "a value holding ': '": "title: Use uv: always",
    "a value starting with @": "title: @uv",
    "a line without its colon": "just some words",
    "a directive": "%YAML 1.2",
}


def _reported_line(lines: list[str]) -> int:
    text = "---\n" + "\n".join(lines) + "\n---\nBody.\n"
    with pytest.raises(CorruptMemory) as raised:
        split_front_matter(text)
    found = re.search(r"\(line (\d+)\)", raised.value.message)
    assert found, raised.value.message
    return int(found.group(1))


@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("what", sorted(BAD))
def test_the_reported_line_is_the_files_own(what: str, where: str) -> None:
    if (what, where) == ("a line without its colon", "first"):
        pytest.skip("YAML reads first-line words as the start of the next line's key: its colon errs")
    key = BAD[what].split(":")[0]
    others = [line for line in GOOD if line.split(":")[0] != key]  # a repeated key is another error
    index = {"first": 0, "middle": 2, "last": len(others)}[where]
    lines = [*others[:index], BAD[what], *others[index:]]
    real = lines.index(BAD[what]) + 2  # the opening `---` is line 1
    assert _reported_line(lines) == real, (what, where, lines)
