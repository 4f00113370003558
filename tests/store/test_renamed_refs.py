"""A cited file renamed with git: the memory stays a body, the mark names the new path, the ref
update is a proposal, and a pure rename is never counted as change."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from engram_mcp.cli.main import main
from engram_mcp.ops import read_ops
from store.code.renames import Renames, parse_moves
from store.code.staleness import _numstat
from store.files.memory import split_front_matter
from store.store import Store
from store.write import commits
from tests.support.files import write
from tests.support.gitrepo import commit_all, git, init, memory

GOTCHA = "Redis keys carry the tenant prefix: change KeyPrefix in redis.go and every reader follows."


def _repo(tmp_path: Path) -> Path:
    root = init(tmp_path / "svc")
    write(root / "redis.go", "package svc\n\nfunc KeyPrefix() string {\n" + '\treturn "t:"\n' * 20 + "}\n")
    write(root / "main.go", "package svc\n")
    commit_all(root, "seed", when="2026-01-01T00:00:00Z")
    memory(
        root,
        "redis-key-prefix",
        "Redis key prefix",
        GOTCHA,
        refs=["redis.go#KeyPrefix"],
        updated="2026-02-01T00:00:00Z",
        always=True,
    )
    commit_all(root, "memory", when="2026-02-01T00:00:00Z")
    return root


@pytest.mark.parametrize("committed", [False, True], ids=["staged", "committed"])
def test_a_renamed_cited_file_keeps_the_memory_a_body_and_names_the_new_path(
    tmp_path: Path, committed: bool
) -> None:
    root = _repo(tmp_path)
    git(root, "mv", "redis.go", "counters.go")
    if committed:
        commit_all(root, "rename", when="2026-03-01T00:00:00Z")
    store = Store(root)
    load = read_ops.load(store, {"query": "change the redis key prefix"})
    assert "redis-key-prefix" in load.data["body_keys"]
    marks = load.data["marks"]["redis-key-prefix"]
    assert [m["kind"] for m in marks] == ["review"]
    assert "redis.go renamed to counters.go" in marks[0]["reason"]


def test_a_rename_that_lost_the_symbol_is_stale_and_still_names_the_new_path(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git(root, "mv", "redis.go", "counters.go")
    counters = root / "counters.go"
    counters.write_text(counters.read_text().replace("func KeyPrefix()", "func Prefix()"))
    commit_all(root, "rename and rename the function", when="2026-03-01T00:00:00Z")
    store = Store(root)
    marks = store.marks(store.view().durable.values())["redis-key-prefix"]
    assert [m.kind for m in marks] == ["stale"]
    assert "renamed to counters.go, which no longer defines KeyPrefix" in marks[0].reason


def test_a_file_git_saw_deleted_and_another_added_is_still_stale(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git(root, "rm", "-q", "redis.go")
    write(root / "counters.go", 'package svc\n\nfunc KeyPrefix() string { return "other" }\n')
    commit_all(root, "replace", when="2026-03-01T00:00:00Z")
    store = Store(root)
    marks = store.marks(store.view().durable.values())["redis-key-prefix"]
    assert [(m.kind, m.reason) for m in marks] == [("stale", "redis.go renamed or deleted")]


def test_a_deleted_file_is_still_stale(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git(root, "rm", "-q", "redis.go")
    commit_all(root, "drop", when="2026-03-01T00:00:00Z")
    store = Store(root)
    marks = store.marks(store.view().durable.values())["redis-key-prefix"]
    assert [(m.kind, m.reason) for m in marks] == [("stale", "redis.go renamed or deleted")]


def test_stale_offers_the_ref_update_as_a_proposal_and_a_pure_rename_is_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _repo(tmp_path)
    git(root, "mv", "redis.go", "counters.go")
    commit_all(root, "rename", when="2026-03-01T00:00:00Z")
    monkeypatch.chdir(root)
    main(["stale"])
    listed = capsys.readouterr().out
    assert "redis.go renamed to counters.go" in listed
    assert "engram stale --propose" in listed
    main(["stale", "--propose", "--json"])
    proposal = orjson.loads(capsys.readouterr().out)["data"]
    [candidate] = proposal["candidates"]
    assert candidate["refs"] == ["counters.go#KeyPrefix"]
    assert candidate["changes"]["target"] == "redis-key-prefix"
    assert candidate["changes"]["dropped_refs"] == ["redis.go#KeyPrefix"]
    assert not candidate["changes"]["body_changed"]
    text = (root / ".engram" / "memory" / "redis-key-prefix.md").read_text()
    assert "redis.go#KeyPrefix" in text  # nothing written before the human commits
    store = Store(root)
    commits.commit(store, proposal["approval_token"], "all")
    meta, body = split_front_matter((root / ".engram" / "memory" / "redis-key-prefix.md").read_text())
    assert meta["refs"] == ["counters.go#KeyPrefix"]
    assert body.strip() == GOTCHA
    commit_all(root, "follow the rename")
    # the memory's `updated` is set back before the rename: its churn must still count nothing
    path = root / ".engram" / "memory" / "redis-key-prefix.md"
    path.write_text(path.read_text().replace(str(meta["updated"]), "2026-02-01T00:00:00Z"))
    store = Store(root)
    assert store.marks(store.view().durable.values()) == {}
    main(["stale", "--json"])
    report = orjson.loads(capsys.readouterr().out)["data"]
    assert report == {"stale": [], "review": []}


def test_a_rename_with_edits_counts_only_the_edited_lines(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git(root, "mv", "redis.go", "counters.go")
    with (root / "counters.go").open("a") as out:
        out.write("// one more line\n")
    commit_all(root, "rename and one line", when="2026-03-01T00:00:00Z")
    found = _numstat(
        git(root, "log", "-M", "--numstat", "-z", "--format=@%ct", "--", "counters.go", "redis.go")
    )
    assert [(path, lines) for _, path, lines in found][0] == ("counters.go", 1)


def test_git_names_are_parsed_without_trusting_them() -> None:
    moves = parse_moves("R100\0a.go\0b.go\0R087\0../x\0c.go\0R100\0d\nx.go\0e.go\0")
    assert moves == [("a.go", "b.go", 100)]
    assert parse_moves("M\0a.go\0R100\0b.go\0c.go\0") == []  # out of step: nothing after is read
    renames = Renames(
        [("a.go", "b.go", 100), ("b.go", "c.go", 90), ("x.go", "y.go", 100), ("y.go", "x.go", 100)]
    )
    assert renames.follow("a.go") is not None and renames.follow("a.go").path == "c.go"
    assert renames.follow("a.go").pure is False
    assert renames.follow("y.go") is not None and renames.follow("y.go").path == "x.go"
    assert renames.follow("x.go") is None  # moved back: x.go is where it is now
    assert sorted(renames.former("c.go")) == ["a.go", "b.go"]
