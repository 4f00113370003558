"""Tiny stores (issue 10 acceptance): stores of 1 to 5 memories, written through `engram_save`
+ `engram_commit`, are searchable and loadable by their own words, and re-saving is NOOP.

Memories are written through the tools in-process (no elicitation: the token flow); reads go
through the `engram` CLI in-process (`engram_mcp.cli.main`). One case runs the real server
through the official SDK in both eras.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli.main import main
from engram_mcp.mcp.app import server_spec
from engram_mcp.mcp.tools.base import Flags
from store.store import Store
from tests.support.cli import run_json
from tests.support.sdk import MODERN, client, commit, propose, run
from tests.support.sdk import data as _data
from tests.support.tools import run_tool

SIZES = (1, 2, 3, 4, 5)
TOPICS = (
    (
        "Releases are tagged from main",
        "Every release is tagged on the main branch after the changelog is updated.",
    ),
    (
        "Payments retry with backoff",
        "Failed payment webhooks are retried with exponential backoff for a day.",
    ),
    (
        "Frontend builds with Vite",
        "The dashboard frontend is bundled by Vite; run the dev server on port 5173.",
    ),
    ("Invoices are immutable", "An issued invoice is never edited; corrections go out as credit notes."),
    ("Logs go to Loki", "Service logs are shipped to Loki and kept for thirty days in staging."),
)
HALF_WORD = "sqlite"
"""Appended to the first half of the memories (exactly half when the size is even)."""
MOST_WORD = "pgbouncer"
"""Appended to the first half, rounded up (more than half when the size is odd)."""


def _candidates(size: int) -> list[dict[str, Any]]:
    out = []
    for n, (title, body) in enumerate(TOPICS[:size]):
        extra = [w for w, count in ((HALF_WORD, size // 2), (MOST_WORD, (size + 1) // 2)) if n < count]
        text = body + "".join(f" Mentions {word} once." for word in extra)
        out.append({"type": "fact", "title": title, "body": text})
    return out


class Tools:
    """The server's tools called in-process, as a client without elicitation would."""

    def __init__(self, workspace: Path) -> None:
        self.store = Store(workspace)
        self.tools = {t.name: t for t in server_spec(self.store, Flags()).tools}

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = run_tool(self.tools[name], arguments)
        assert not result.is_error, result
        assert result.structured is not None
        data: dict[str, Any] = result.structured["data"]
        return data

    def save(self, candidates: list[dict[str, Any]]) -> dict[str, Any]:
        return self.call("engram_save", {"candidates": candidates})

    def commit(self, proposal: dict[str, Any]) -> dict[str, Any]:
        return self.call("engram_commit", {"approval_token": proposal["approval_token"], "approve": "all"})

    def close(self) -> None:
        self.store.close()


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, envelope = run_json(capsys, *argv)
    assert code == 0 and envelope["ok"] is True, envelope
    data: dict[str, Any] = envelope["data"]
    return data


def _searched(capsys: pytest.CaptureFixture[str], query: str) -> list[str]:
    return [e["id"] for e in _cli(capsys, "search", query, "--limit", "50")["entries"]]


def _loaded(capsys: pytest.CaptureFixture[str], query: str) -> list[str]:
    keys: list[str] = _cli(capsys, "load", query)["selected_keys"]
    return keys


def _files(workspace: Path) -> dict[str, bytes]:
    folder = workspace / ".engram" / "memory"
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.md"))}


@pytest.fixture
def tiny(
    request: pytest.FixtureRequest, empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, list[str], list[dict[str, Any]]]]:
    """A workspace holding `size` memories written through engram_save + engram_commit."""
    size: int = request.param
    monkeypatch.chdir(empty_workspace)
    assert main(["init"]) == 0
    tools = Tools(empty_workspace)
    candidates = _candidates(size)
    proposal = tools.save(candidates)
    assert [row["verdict"] for row in proposal["candidates"]] == ["ADD"] * size
    written = tools.commit(proposal)["written"]
    tools.close()
    assert len(written) == size
    yield empty_workspace, [w["id"] for w in written], candidates


@pytest.mark.parametrize("tiny", SIZES, indirect=True)
def test_every_memory_is_found_by_its_own_words(
    tiny: tuple[Path, list[str], list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    """`engram search` and `engram load` find each memory at once by its title, by its body,
    and by a single word of its own."""
    _, ids, candidates = tiny
    for memory_id, candidate in zip(ids, candidates, strict=True):
        own_word = candidate["title"].split()[0]
        for query in (candidate["title"], candidate["body"], own_word):
            assert memory_id in _searched(capsys, query), (query, memory_id)
            assert memory_id in _loaded(capsys, query), (query, memory_id)
        assert _searched(capsys, candidate["title"])[0] == memory_id


@pytest.mark.parametrize("tiny", SIZES, indirect=True)
def test_a_word_in_half_the_memories_finds_all_of_them(
    tiny: tuple[Path, list[str], list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A word in exactly half the memories (and one in more than half) finds every memory
    that holds it, through search and load; BM25Okapi's idf is zero or negative there."""
    _, ids, _ = tiny
    size = len(ids)
    for word, count in ((HALF_WORD, size // 2), (MOST_WORD, (size + 1) // 2)):
        if count == 0:
            continue
        assert sorted(_searched(capsys, word)) == sorted(ids[:count]), word
        assert set(ids[:count]) <= set(_loaded(capsys, word)), word


@pytest.mark.parametrize("tiny", SIZES, indirect=True)
def test_re_saving_the_same_text_is_noop_and_writes_nothing(
    tiny: tuple[Path, list[str], list[dict[str, Any]]],
) -> None:
    """Each memory proposed again, word for word: NOOP of itself; committing writes nothing."""
    workspace, ids, candidates = tiny
    before = _files(workspace)
    tools = Tools(workspace)
    proposal = tools.save(candidates)
    assert [row["verdict"] for row in proposal["candidates"]] == [f"NOOP duplicate of {i}" for i in ids]
    report = tools.commit(proposal)
    tools.close()
    assert report["written"] == []
    assert _files(workspace) == before


@pytest.mark.parametrize("tiny", SIZES, indirect=True)
def test_a_memory_that_gains_a_clause_is_update(
    tiny: tuple[Path, list[str], list[dict[str, Any]]],
) -> None:
    """Each memory proposed with a clause added is UPDATE of it, and the commit applies it."""
    workspace, ids, candidates = tiny
    grown = [{**c, "body": c["body"] + " Ask the platform team before changing it."} for c in candidates]
    tools = Tools(workspace)
    proposal = tools.save(grown)
    assert [row["verdict"] for row in proposal["candidates"]] == [f"UPDATE {i}" for i in ids]
    written = tools.commit(proposal)["written"]
    tools.close()
    assert sorted(w["id"] for w in written) == sorted(ids)
    for memory_id in ids:
        text = (workspace / ".engram" / "memory" / f"{memory_id}.md").read_text("utf-8")
        assert "Ask the platform team before changing it." in text


@pytest.mark.parametrize("size", SIZES)
def test_the_server_that_wrote_them_finds_them_at_once(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """In the server process that committed them, engram_search and engram_load find every
    new memory by its title on the very next call."""
    monkeypatch.chdir(empty_workspace)
    assert main(["init"]) == 0
    tools = Tools(empty_workspace)
    candidates = _candidates(size)
    ids = [w["id"] for w in tools.commit(tools.save(candidates))["written"]]
    for memory_id, candidate in zip(ids, candidates, strict=True):
        found = tools.call("engram_search", {"query": candidate["title"]})["entries"]
        assert found and found[0]["id"] == memory_id
        assert memory_id in tools.call("engram_load", {"query": candidate["title"]})["selected_keys"]
    tools.close()


def test_four_memories_two_with_sqlite(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 10's case: 4 memories, 2 containing "sqlite": `engram search sqlite` finds both."""
    monkeypatch.chdir(empty_workspace)
    assert main(["init"]) == 0
    tools = Tools(empty_workspace)
    bodies = [
        "Local state lives in SQLite.",
        "The test suite runs on an in-memory sqlite database.",
        "Jobs are queued in Redis streams.",
        "Rendered pages are cached in Memcached.",
    ]
    proposal = tools.save(
        [{"type": "fact", "title": f"Storage fact {n}", "body": b} for n, b in enumerate(bodies)]
    )
    ids = [w["id"] for w in tools.commit(proposal)["written"]]
    tools.close()
    assert sorted(_searched(capsys, "sqlite")) == sorted(ids[:2])


def test_sdk_commit_then_propose_the_same_memory_is_noop(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The official SDK flow on a new store: propose, commit, propose the same memory again →
    NOOP of the memory just written (it was ADD, a second `-2` file). Era-neutral: run once."""
    monkeypatch.chdir(empty_workspace)
    assert main(["init"]) == 0
    candidate = {"type": "decision", "title": TOPICS[0][0], "body": TOPICS[0][1]}

    async def body() -> None:
        async with client(empty_workspace, MODERN) as session:
            first = await propose(session, [candidate])
            assert first["candidates"][0]["verdict"] == "ADD"
            committed = _data(await commit(session, first["approval_token"]))
            memory_id = committed["written"][0]["id"]
            again = await propose(session, [candidate])
            assert again["candidates"][0]["verdict"] == f"NOOP duplicate of {memory_id}"

    run(body)
    assert [p.name for p in (empty_workspace / ".engram" / "memory").glob("*.md")] == [
        f"{TOPICS[0][0].lower().replace(' ', '-')}.md"
    ]
