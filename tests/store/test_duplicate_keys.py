"""Duplicate YAML keys are refused per file (issue 9, SPEC §2 "strict front matter").

YAML loaders keep the last of two equal keys, so `always: false` at the top and `always: true`
after a page of filler made a memory load into every session while a reviewer read "false".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from store.errors import CorruptMemory
from store.files.memory import parse_memory
from store.store import Store
from store.write import review

FILLER = "".join(f"note_{n}: filler line {n}\n" for n in range(40))


def hidden_always(title: str = "Deploy checklist") -> str:
    return (
        "---\nid: deploy-checklist\ntype: rule\n"
        f"title: {title}\nalways: false\n{FILLER}always: true\n---\nRun the deploy script.\n"
    )


@pytest.mark.parametrize(
    "title", ["Deploy checklist", "R&D deploy checklist"], ids=["one-line-title", "ampersand-title"]
)
def test_a_repeated_key_is_refused_naming_the_key_and_its_lines(title: str) -> None:
    """Whatever the title holds (an `&` once sent the block to another loader), one refusal."""
    with pytest.raises(CorruptMemory) as info:
        parse_memory(
            hidden_always(title).encode(), file_id="deploy-checklist", scope="project", tier="durable"
        )
    assert info.value.code == "ENGRAM_CORRUPT"
    message = info.value.message
    assert "repeats the key 'always'" in message, message
    assert "line 46" in message and "first on line 5" in message, message


def test_a_file_with_a_repeated_key_is_a_problem_and_loads_with_neither_value(workspace: Path) -> None:
    path = workspace / ".engram" / "memory" / "deploy-checklist.md"
    path.write_text(hidden_always())
    store = Store(workspace)
    view = store.view()
    assert "deploy-checklist" not in view.durable
    problems = [p for p in view.problems if p.file == ".engram/memory/deploy-checklist.md"]
    assert [p.code for p in problems] == ["ENGRAM_CORRUPT"]
    assert "repeats the key 'always'" in problems[0].message
    assert all(e.memory.id != "deploy-checklist" for e in store.route("deploy the service").entries)
    assert review.verify(store)["ok"] is False


@pytest.mark.parametrize(
    "front",
    [
        'title: A\n"title": B\n',  # the same key, quoted
        "title: A\nvariants:\n  terse: x\n  terse: y\n",  # inside a nested mapping
        "title: A\ntags: [a]\n? tags\n: [b]\n",  # explicit key syntax
        "title: A\nvariants: {terse: x, terse: y}\n",  # two on one line
    ],
    ids=["quoted", "nested", "explicit", "flow"],
)
def test_every_spelling_of_a_repeated_key_is_refused(front: str) -> None:
    text = f"---\nid: x-memory\ntype: fact\n{front}---\nBody.\n"
    with pytest.raises(CorruptMemory, match="repeats the key"):
        parse_memory(text.encode(), file_id="x-memory", scope="project", tier="durable")


def test_distinct_keys_still_parse() -> None:
    text = "---\nid: x-memory\ntype: fact\ntitle: A\nvariants:\n  terse: x\n  short: y\n---\nBody.\n"
    memory = parse_memory(text.encode(), file_id="x-memory", scope="project", tier="durable")
    assert memory.variants == {"terse": "x", "short": "y"}
