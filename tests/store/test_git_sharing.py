"""Issue 13: git is the sharing engine — branches merge, derived files stay local, worktrees
are workspaces of their own, and verify lists what a pull brought once."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_mcp.ops import read_ops
from store.files.workspace import find_workspace
from store.store import Store
from store.write import commits, proposals, review
from tests.support.gitrepo import commit_all, git, init


def _save(root: Path, **candidate: object) -> None:
    store = Store(root)
    entries, redactions = proposals.draft(store, [{"type": "fact", "refs": [], **candidate}])
    preview = proposals.store_proposal(store, entries, redactions, "save")
    report = commits.commit(store, preview.token, "all")
    assert report.written and not report.deferred, report
    store.close()


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A shared repository holding four memories, cloned twice (two people, one user secret)."""
    seed = init(tmp_path / "seed")
    (seed / "README.md").write_text("project\n", "utf-8")
    Store(seed).init()
    for name, body in (
        ("alpha", "Alpha uses port 5432 for the database."),
        ("bravo", "Bravo deploys on Fridays only."),
        ("charlie", "Charlie keeps logs for ten days."),
        ("delta", "Delta builds with make release."),
    ):
        _save(seed, title=f"{name.title()} fact", body=body, id=name)
    commit_all(seed, "seed memories")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    return bare


def _clone(origin: Path, target: Path) -> Path:
    """A clone whose memories its owner reviewed (`engram verify --accept`)."""
    git(origin.parent, "clone", "-q", str(origin), str(target))
    review.accept(Store(target))
    return target


def test_two_branches_that_touch_different_memories_merge_cleanly(origin: Path, tmp_path: Path) -> None:
    """Issue 13 acceptance: each branch adds, updates and supersedes; the merge has no
    conflict, no derived file is tracked, and the merged store reads every change."""
    a = _clone(origin, tmp_path / "a")
    b = _clone(origin, tmp_path / "b")
    git(a, "checkout", "-q", "-b", "branch-a")
    _save(a, title="Echo fact", body="Echo runs nightly at two.")
    _save(a, title="Alpha fact", body="Alpha uses port 5433 for the database now.", id="alpha")
    _save(a, title="Bravo fact, revised", body="Bravo deploys on Tuesdays.", supersedes="bravo", id="bravo-2")
    commit_all(a, "branch a")
    git(b, "checkout", "-q", "-b", "branch-b")
    _save(b, title="Foxtrot fact", body="Foxtrot caches for an hour.")
    _save(b, title="Charlie fact", body="Charlie keeps logs for thirty days.", id="charlie")
    _save(
        b, title="Delta fact, revised", body="Delta builds with make dist.", supersedes="delta", id="delta-2"
    )
    commit_all(b, "branch b")
    git(b, "push", "-q", "origin", "branch-b")
    git(a, "fetch", "-q", "origin")
    git(a, "merge", "-q", "--no-edit", "origin/branch-b")

    assert git(a, "status", "--porcelain") == ""
    tracked = git(a, "ls-files", ".engram").split()
    assert all(
        p.startswith(".engram/memory/") and p.endswith(".md") or p == ".engram/.gitignore" for p in tracked
    )
    store = Store(a)
    view = store.view()
    assert view.problems == ()
    assert sorted(view.durable) == [
        "alpha", "bravo", "bravo-2", "charlie", "delta", "delta-2", "echo-fact", "foxtrot-fact",
    ]  # fmt: skip
    assert view.durable["bravo"].meta["superseded_by"] == "bravo-2"
    assert view.durable["delta"].meta["superseded_by"] == "delta-2"
    assert "5433" in view.durable["alpha"].body and "thirty" in view.durable["charlie"].body
    assert [e.id for e in store.search("foxtrot caches")][:1] == ["foxtrot-fact"]

    verify = read_ops.verify(store)
    assert verify.data["from_git"] == {"new": ["delta-2", "foxtrot-fact"], "changed": ["charlie", "delta"]}
    assert verify.text.count("foxtrot-fact") == 1
    assert (
        "Arrived through git since the last review: new: delta-2, foxtrot-fact; changed: charlie, delta"
        in verify.text
    )
    review.accept(store)
    assert read_ops.verify(Store(a)).data["ok"] is True


def test_each_git_worktree_is_its_own_workspace_with_its_own_derived_files(
    origin: Path, tmp_path: Path
) -> None:
    """Issue 13 acceptance: a worktree's reads and derived files are its own."""
    a = _clone(origin, tmp_path / "a")
    other = tmp_path / "a-feature"
    git(a, "worktree", "add", "-q", "-b", "feature", str(other))
    (other / "sub").mkdir()
    assert find_workspace(other / "sub") == other
    _save(other, title="Golf fact", body="Golf only lives on the feature branch.")
    main_store, wt_store = Store(a), Store(other)
    assert "golf-fact" in wt_store.view().durable
    assert "golf-fact" not in main_store.view().durable
    main_store.close()
    wt_store.close()
    assert (other / ".engram" / "index.json").exists() and (a / ".engram" / "index.json").exists()
    assert (other / ".engram" / "index.json").read_bytes() != (a / ".engram" / "index.json").read_bytes()
    assert git(other, "status", "--porcelain") == "?? .engram/memory/golf-fact.md\n"
