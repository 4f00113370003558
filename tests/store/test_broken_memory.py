"""A memory file that is there but does not parse, read by its id through the store (issue 22):
the answer is the file's problem (ENGRAM_CORRUPT), not "no memory with that id", for every
surface that reads by id: `engram show`, `engram load --id` and the engram_load tool."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from store.errors import CorruptMemory, NotFound
from store.store import Store

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """The fixture workspace with one memory's front matter left open."""
    target = tmp_path / "ws"
    shutil.copytree(FIXTURES / "workspace", target)
    path = target / ".engram" / "memory" / "cut-a-release.md"
    path.write_text(path.read_text("utf-8").replace("---\n", "---\ntags: [open\n", 1), "utf-8")
    return target


def test_a_load_by_id_of_a_file_that_does_not_parse_raises_corrupt(broken: Path) -> None:
    """The store names the file and its problem; NotFound stays for an id with no file."""
    store = Store(broken, read_only=True)
    with pytest.raises(CorruptMemory) as raised:
        store.load(memory_id="cut-a-release")
    assert raised.value.code == "ENGRAM_CORRUPT"
    assert ".engram/memory/cut-a-release.md" in raised.value.message
    assert "YAML" in raised.value.message
    with pytest.raises(NotFound):
        store.load(memory_id="no-such-memory")


def test_the_load_tool_by_id_answers_corrupt(broken: Path) -> None:
    """engram_load with `id` goes through the same store lookup (SPEC §5: a tool execution
    error, isError true, with the code the model can act on)."""
    from tests.support.tools import call_tool  # the tool harness (not on every branch's tests)

    result = call_tool(broken, "engram_load", {"id": "cut-a-release"})
    assert result.is_error
    assert result.text.startswith("ENGRAM_CORRUPT: .engram/memory/cut-a-release.md does not parse")
