"""Issue 13 on the write path: refs found at proposal time, valid time, both shown and written."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_mcp.ops import read_ops
from engram_mcp.ops.outcome import Outcome
from engram_mcp.ops.previews import token_outcome
from store import status as store_status
from store.errors import StoreError
from store.files.memory import split_front_matter
from store.store import Store
from store.write import commits, proposals
from tests.support.files import write
from tests.support.gitrepo import commit_all, init, memory


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init(tmp_path / "repo")
    write(root / "store" / "bm25.py", "class InvertedIndex:\n    pass\n")
    commit_all(root, "seed")
    return root


def _propose(store: Store, **candidate: object) -> Outcome:
    item = {
        "type": "fact",
        "title": "The inverted index",
        "body": "InvertedIndex in store/bm25.py maps terms.",
    }
    item.update(candidate)
    entries, redactions = proposals.draft(store, [item])
    return token_outcome(proposals.store_proposal(store, entries, redactions, "save"))


def _file(root: Path, memory_id: str) -> dict[str, object]:
    meta, _ = split_front_matter((root / ".engram" / "memory" / f"{memory_id}.md").read_text("utf-8"))
    return meta


def test_references_named_in_the_text_are_proposed_shown_and_written(repo: Path) -> None:
    """Issue 13: extracted at proposal time, shown in the preview, written on approval."""
    store = Store(repo)
    preview = _propose(store)
    assert preview.data["candidates"][0]["refs"] == ["store/bm25.py#InvertedIndex"]
    assert "   refs: store/bm25.py#InvertedIndex" in preview.text
    commits.commit(store, preview.data["approval_token"], "all")
    assert _file(repo, "the-inverted-index")["refs"] == ["store/bm25.py#InvertedIndex"]


def test_the_human_drops_or_changes_references_by_giving_refs(repo: Path) -> None:
    """Issue 13: `refs` given (an empty list included) is kept as given, never re-extracted."""
    store = Store(repo)
    none = _propose(store, refs=[])
    assert "refs" not in none.data["candidates"][0]
    assert "refs:" not in none.text
    chosen = _propose(store, refs=["store/bm25.py"], title="Another title about ranking")
    commits.commit(store, chosen.data["approval_token"], "all")
    assert _file(repo, "another-title-about-ranking")["refs"] == ["store/bm25.py"]


def test_a_reference_outside_the_workspace_is_refused_before_any_preview(repo: Path) -> None:
    """Spec-mandated (a repository is untrusted input): refs never leave the workspace."""
    with pytest.raises(StoreError, match="not a path inside the workspace"):
        proposals.draft(
            Store(repo), [{"type": "fact", "title": "t", "body": "b", "refs": ["../../etc/passwd"]}]
        )


def test_valid_until_and_review_after_are_shown_and_written(repo: Path) -> None:
    """Issue 13: engram_save and the preview handle both dates."""
    store = Store(repo)
    preview = _propose(store, refs=[], valid_until="2030-01-31", review_after="2029-06-01")
    row = preview.data["candidates"][0]
    assert (row["valid_until"], row["review_after"]) == ("2030-01-31", "2029-06-01")
    assert "valid until 2030-01-31 · review after 2029-06-01" in preview.text
    commits.commit(store, preview.data["approval_token"], "all")
    meta = _file(repo, "the-inverted-index")
    assert (meta["valid_until"], meta["review_after"]) == ("2030-01-31", "2029-06-01")


def test_a_date_that_is_not_a_date_is_refused(repo: Path) -> None:
    """engram's choice: valid time is a YYYY-MM-DD date or nothing."""
    with pytest.raises(StoreError, match="valid_until must be a date"):
        proposals.draft(Store(repo), [{"type": "fact", "title": "t", "body": "b", "valid_until": "soon"}])


def test_an_expired_memory_is_left_out_of_reads_but_kept_and_listed(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: after valid_until a memory is excluded from reads, kept on disk, and
    `engram stale --expired` lists it; its id is never given to a new memory."""
    import orjson

    from engram_mcp.cli.main import main

    memory(
        repo,
        "old-port",
        "The dev server port",
        "The dev server listens on port 8080.",
        valid_until="2020-01-01",
        always=True,
    )
    memory(repo, "new-fact", "Another fact", "Still valid.", valid_until="2999-01-01", always=True)
    store = Store(repo)
    assert [e["id"] for e in read_ops.search(store, {"query": "dev server port"}).data["entries"]] == []
    assert read_ops.load(store, {"query": ""}).data["selected_keys"] == ["new-fact"]
    assert store_status.report(store)["counts"]["project"] == 1
    assert (repo / ".engram" / "memory" / "old-port.md").exists()
    monkeypatch.chdir(repo)
    main(["stale", "--expired", "--json"])
    listed = orjson.loads(capsys.readouterr().out)["data"]["expired"]
    assert [(r["id"], r["valid_until"], r["file"]) for r in listed] == [
        ("old-port", "2020-01-01", ".engram/memory/old-port.md")
    ]
    preview = _propose(store, title="Old port", body="The port.", refs=[], id="old-port")
    assert preview.data["candidates"][0]["id"] != "old-port"


def test_review_after_flags_a_memory_that_still_loads(repo: Path) -> None:
    """Issue 13: review_after flags a memory (search and load), its body still loaded."""
    memory(
        repo, "check-me", "A fact to recheck", "Recheck this fact.", review_after="2020-01-01", always=True
    )
    store = Store(repo)
    load = read_ops.load(store, {"query": ""})
    assert load.data["body_keys"] == ["check-me"]
    assert load.data["marks"] == {
        "check-me": [{"kind": "review", "reason": "review after 2020-01-01 has passed"}]
    }
    assert "Marked review: review after 2020-01-01 has passed" in load.text
    entry = read_ops.search(store, {"query": "recheck fact"}).data["entries"][0]
    assert entry["marks"][0]["kind"] == "review"


def test_a_cited_file_rewritten_since_the_memory_was_updated_is_marked_for_review(tmp_path: Path) -> None:
    """Issue 13: where git is there, a cited file that changed a lot since `updated` is a
    softer `review` mark; a small change is not."""
    root = init(tmp_path / "churn")
    write(root / "big.py", "".join(f"line_{n} = {n}\n" for n in range(40)))
    write(root / "small.py", "".join(f"line_{n} = {n}\n" for n in range(40)))
    commit_all(root, "seed", when="2026-01-01T00:00:00Z")
    memory(
        root, "big-file", "Big file facts", "About big.py.", refs=["big.py"], updated="2026-02-01T00:00:00Z"
    )
    memory(
        root,
        "small-file",
        "Small file facts",
        "About small.py.",
        refs=["small.py"],
        updated="2026-02-01T00:00:00Z",
    )
    write(root / "big.py", "".join(f"renamed_{n} = {n}\n" for n in range(40)))
    write(root / "small.py", "".join(f"line_{n} = {n}\n" for n in range(39)) + "line_39 = 0\n")
    commit_all(root, "rewrite", when="2026-03-01T00:00:00Z")
    store = Store(root)
    marks = store.marks(store.view().durable.values())
    assert {k: [m.kind for m in v] for k, v in marks.items()} == {"big-file": ["review"]}
    assert "big.py changed a lot since this memory was updated (80 lines)" in marks["big-file"][0].reason


def test_a_glob_with_no_match_is_stale(tmp_path: Path) -> None:
    """SPEC §2: a glob reference is broken when no file matches it."""
    root = tmp_path / "globs"
    write(root / "tests" / "unit" / "test_a.py", "def test_a():\n    pass\n")
    memory(root, "tests-glob", "Where tests live", "Under tests/.", refs=["tests/**/test_*.py"])
    memory(root, "docs-glob", "Where docs live", "Under docs/.", refs=["docs/*.md"])
    store = Store(root)
    marks = store.marks(store.view().durable.values())
    assert {k: [m.reason for m in v] for k, v in marks.items()} == {
        "docs-glob": ["no file matches docs/*.md"]
    }


def test_a_memory_file_holding_conflict_markers_is_engram_conflict_and_not_loaded(tmp_path: Path) -> None:
    """Issue 13: ENGRAM_CONFLICT names the file and the fix; nothing of it is read."""
    root = tmp_path / "conflicted"
    path = memory(root, "merged", "A merged memory", "base")
    path.write_text(
        path.read_text("utf-8").replace("base\n", "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n"),
        "utf-8",
    )
    memory(root, "fine", "A fine memory", "fine body")
    store = Store(root)
    assert list(store.view().durable) == ["fine"]
    outcome = read_ops.search(store, {"query": "merged memory"})
    conflicts = [d for d in outcome.diagnostics if d[0] == "ENGRAM_CONFLICT"]
    assert conflicts and conflicts[0][1].startswith(".engram/memory/merged.md: holds git conflict markers")
    assert "remove the markers" in conflicts[0][1]
