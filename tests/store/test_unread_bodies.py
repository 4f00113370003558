"""A fresh build reads each memory file once: the body parsed with the front matter is held
until the index asks for it, then only the small LRU keeps it, and bodies nobody asks for do
not stay held (a bound on their size, and a drop once parsing has been quiet)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store.files.memory import Memory, parse_memory
from store.files.text_cache import TEXTS


@pytest.fixture(autouse=True)
def _empty_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(TEXTS, "limit", 4)
    TEXTS.clear()
    yield
    TEXTS.clear()


def _parsed(folder: Path, count: int) -> list[Memory]:
    found = []
    for n in range(count):
        name = f"fact-{n:04d}"
        data = f"---\nid: {name}\ntype: fact\ntitle: Fact {n}\n---\nThe body of fact {n}.\n".encode()
        path = folder / f"{name}.md"
        path.write_bytes(data)
        found.append(parse_memory(data, file_id=name, scope="project", tier="durable", path=str(path)))
    return found


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = Memory._current

    def read(self: Memory) -> tuple[dict[str, Any], str] | None:
        reads.append(self.id)
        return real(self)

    monkeypatch.setattr(Memory, "_current", read)
    return reads


def test_a_build_reads_each_body_from_the_parse_not_from_disk_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = _parsed(tmp_path, 50)
    reads = _counting_reads(monkeypatch)
    assert [m.body for m in memories] == [f"The body of fact {n}.\n" for n in range(50)]
    assert reads == []
    assert TEXTS.unread == {} and TEXTS.unread_chars == 0
    assert [m.body for m in memories[:10]] == [f"The body of fact {n}.\n" for n in range(10)]
    assert len(reads) == 10  # afterwards only the LRU (4 here) keeps bodies: not all resident


def test_held_bodies_are_bounded_oldest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    size = len("The body of fact 0000.\n")
    monkeypatch.setattr(TEXTS, "unread_limit", 10 * size)
    memories = _parsed(tmp_path, 30)
    assert TEXTS.unread_chars <= 10 * size
    assert {key[0] for key in TEXTS.unread} == {m.path for m in memories[-10:]}
    reads = _counting_reads(monkeypatch)
    assert memories[0].body == "The body of fact 0.\n" and reads == ["fact-0000"]


def test_bodies_left_unread_are_dropped_once_parsing_is_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = _parsed(tmp_path, 5)
    assert len(TEXTS.unread) == 5
    assert memories[0].body.startswith("The body")  # a build still under way keeps the rest
    assert len(TEXTS.unread) == 4
    assert memories[0].body.startswith("The body")  # from the LRU: nothing dropped, parsing is recent
    assert len(TEXTS.unread) == 4
    monkeypatch.setattr(TEXTS, "_last_hold", TEXTS._last_hold - TEXTS.quiet - 1)
    assert memories[0].body.startswith("The body")
    assert TEXTS.unread == {} and TEXTS.unread_chars == 0
    assert memories[3].body == "The body of fact 3.\n"  # from disk, still right
