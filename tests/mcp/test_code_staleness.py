"""Issue 13 acceptance: memories citing code are checked against the working tree on every read."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from engram_mcp.cli.main import main
from engram_mcp.ops import read_ops
from engram_mcp.ops.hook import session_start
from store.store import Store
from tests.support.cli import run_json
from tests.support.files import write
from tests.support.gitrepo import commit_all, init, memory

BM25 = "class InvertedIndex:\n    def search(self, query):\n        return []\n\n\ndef score(doc):\n    return 0\n"
CATALOG = "def refresh():\n    pass\n\n\ndef flush():\n    pass\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with two cited files and five memories (four cite code)."""
    root = init(tmp_path / "repo")
    write(root / "store" / "bm25.py", BM25)
    write(root / "store" / "catalog.py", CATALOG)
    common = {"always": True, "updated": "2026-01-01T00:00:00Z"}
    memory(
        root,
        "bm25-file",
        "Ranking lives in the BM25 module",
        "Scoring is in store/bm25.py.",
        refs=["store/bm25.py"],
        **common,
    )
    memory(
        root,
        "inverted-index",
        "The inverted index class",
        "See InvertedIndex.",
        refs=["store/bm25.py#InvertedIndex"],
        **common,
    )
    memory(
        root,
        "flush-index",
        "Flush writes the index",
        "flush writes index.json.",
        refs=["store/catalog.py#flush"],
        **common,
    )
    memory(
        root,
        "refresh-index",
        "Refresh re-reads changed files",
        "refresh takes in changed files.",
        refs=["store/catalog.py#refresh"],
        **common,
    )
    memory(root, "plain-fact", "Plain fact without refs", "Nothing cited here at all.", **common)
    commit_all(root, "seed")
    monkeypatch.chdir(root)
    return root


def _break(repo: Path) -> None:
    (repo / "store" / "bm25.py").rename(repo / "store" / "ranking.py")
    (repo / "store" / "catalog.py").write_text("def refresh():\n    pass\n", "utf-8")


def _restore(repo: Path) -> None:
    (repo / "store" / "ranking.py").rename(repo / "store" / "bm25.py")
    (repo / "store" / "catalog.py").write_text(CATALOG, "utf-8")


EXPECTED = {
    "bm25-file": ["store/bm25.py renamed or deleted"],
    "inverted-index": ["store/bm25.py renamed or deleted"],
    "flush-index": ["flush no longer defined in store/catalog.py"],
}


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code, envelope = run_json(capsys, *argv)
    assert code == 0, envelope
    return envelope


def _stale_of(rows: list[dict[str, object]]) -> dict[str, list[str]]:
    return {
        str(r["id"]): [m["reason"] for m in r.get("marks", []) if m["kind"] == "stale"]  # type: ignore[attr-defined,index]
        for r in rows
        if any(m["kind"] == "stale" for m in r.get("marks", []))  # type: ignore[attr-defined,index]
    }


def test_rename_and_deleted_function_mark_exactly_three_memories_everywhere(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13 acceptance: exactly the three memories are stale, with reasons, in search,
    load, `engram stale` and the hook; restoring the files clears the marks with no restart."""
    store = Store(repo)
    assert store.marks(store.view().durable.values()) == {}
    _break(repo)

    search = read_ops.search(store, {"query": "index bm25 flush refresh fact ranking", "limit": 10})
    assert _stale_of(search.data["entries"]) == EXPECTED
    assert "stale: store/bm25.py renamed or deleted" in search.text

    load = read_ops.load(store, {"query": ""})
    assert {k: [m["reason"] for m in v] for k, v in load.data["marks"].items()} == EXPECTED
    assert set(EXPECTED) <= set(load.data["card_ids"])
    assert not set(EXPECTED) & set(load.data["body_keys"])
    assert {"refresh-index", "plain-fact"} <= set(load.data["body_keys"])
    assert "(flush-index) — stale: flush no longer defined in store/catalog.py" in load.text

    route = read_ops.route(store, {"task": "flush the inverted index"})
    assert set(_stale_of(route.data["entries"])) <= set(EXPECTED)

    stale = _cli(capsys, "stale")
    assert _stale_of(stale["data"]["stale"]) == EXPECTED  # type: ignore[index]

    out = io.StringIO()
    assert session_start(str(repo), stdin=io.StringIO(""), out=out) == 0
    hooked = out.getvalue()
    for memory_id, reasons in EXPECTED.items():
        assert f"({memory_id}) — stale: {reasons[0]}" in hooked
    assert "(refresh-index)" not in hooked.split("Cards")[-1]

    _restore(repo)
    assert read_ops.search(store, {"query": "index bm25 flush refresh fact"}).data["entries"]
    assert _stale_of(read_ops.search(store, {"query": "index bm25 flush refresh fact"}).data["entries"]) == {}
    assert "marks" not in read_ops.load(store, {"query": ""}).data
    assert _cli(capsys, "stale")["data"]["stale"] == []  # type: ignore[index]


def test_load_by_id_or_with_include_stale_gives_the_body_with_its_reason(repo: Path) -> None:
    """Issue 13: a stale memory's body is given only when asked, and still says why."""
    _break(repo)
    store = Store(repo)
    by_id = read_ops.load(store, {"id": "flush-index"})
    assert by_id.data["body_keys"] == ["flush-index"]
    assert "Marked stale: flush no longer defined in store/catalog.py" in by_id.text
    everything = read_ops.load(store, {"query": "", "include_stale": True})
    assert set(EXPECTED) <= set(everything.data["body_keys"])


def test_doctor_counts_stale_memories(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13: `engram doctor` counts stale memories."""
    _break(repo)
    capsys.readouterr()
    main(["doctor", "--json"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["memory"] == {"stale": 3, "review": 0, "expired": 0}


def test_a_user_scope_memory_is_never_checked_against_this_workspace(repo: Path, engram_home: Path) -> None:
    """engram's choice: user memories travel to every workspace, where their paths mean nothing."""
    memory(engram_home, "user-ref", "User memory citing a path", "See nowhere.", refs=["gone/file.py"])
    (engram_home / "memory").mkdir(exist_ok=True)
    (engram_home / ".engram" / "memory" / "user-ref.md").rename(engram_home / "memory" / "user-ref.md")
    store = Store(repo)
    assert store.marks(store.view().durable.values()) == {}


def test_the_cli_load_takes_include_stale(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13: `engram load --include-stale` gives stale bodies (the explicit flag)."""
    _break(repo)
    data = _cli(capsys, "load", "--include-stale")["data"]
    assert set(EXPECTED) <= set(data["body_keys"])  # type: ignore[index]
