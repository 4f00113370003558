"""Issue 23, Build 4: near-duplicate pairs and the merge a person can propose for one."""

from __future__ import annotations

from pathlib import Path

from store.propose.near_duplicates import merge_candidate, near_duplicates
from store.store import Store
from store.write import proposals
from tests.support.store_helpers import write_memory

TAX = "Round the tax on each invoice line before summing the lines, never on the total."


def _store(root: Path) -> Store:
    (root / ".engram" / "memory").mkdir(parents=True)
    write_memory(
        root,
        "tax-per-line",
        title="Tax is rounded per invoice line",
        body=TAX + "\n",
        tags=["billing"],
        updated="2026-01-01T00:00:00Z",
    )
    write_memory(
        root,
        "line-tax-rounding",
        title="Tax rounded per invoice line",
        body=TAX + "\n\nThe Stripe webhook replays use the same rounding helper.\n",
        tags=["stripe"],
        paths=["api/tax.py"],
        updated="2026-03-01T00:00:00Z",
    )
    write_memory(root, "uv-installs", title="Use uv for installs", body="Run `uv pip install` in CI.\n")
    write_memory(root, "old-tax", title="Tax is rounded per invoice line", body=TAX + "\n", status="retired")
    return Store(root, background=False)


def _pairs(store: Store) -> list:
    config = store.config()
    return near_duplicates(
        list(store.view().durable.values()), related=config.dedup_related, duplicate=config.dedup_duplicate
    )


def test_two_memories_saying_the_same_thing_are_a_pair_and_nothing_else_is(tmp_path: Path) -> None:
    store = _store(tmp_path)
    pairs = _pairs(store)
    assert [(p.keeper.id, p.other.id) for p in pairs] == [("tax-per-line", "line-tax-rounding")]
    pair = pairs[0]
    assert pair.similarity >= 0.6
    assert not pair.contained  # the other adds the webhook sentence


def test_a_pair_across_scopes_is_not_listed(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home-scope"
    monkeypatch.setenv("ENGRAM_HOME", str(home))
    root = tmp_path / "ws"
    (root / ".engram" / "memory").mkdir(parents=True)
    write_memory(root, "tax-per-line", title="Tax is rounded per invoice line", body=TAX + "\n")
    write_memory(
        home.parent / "home-root", "my-tax", title="Tax is rounded per invoice line", body=TAX + "\n"
    )
    (home.parent / "home-root" / ".engram").rename(home)
    store = Store(root, background=False)
    assert len(store.view().durable) == 2
    assert _pairs(store) == []


def test_the_merge_is_an_update_of_the_keeper_with_what_the_other_adds(tmp_path: Path) -> None:
    store = _store(tmp_path)
    pair = _pairs(store)[0]
    candidate = merge_candidate(pair)
    assert candidate["id"] == "tax-per-line" and candidate["title"] == "Tax is rounded per invoice line"
    assert candidate["body"].startswith(TAX)
    assert candidate["body"].count(TAX) == 1
    assert "Stripe webhook replays" in candidate["body"]
    assert candidate["tags"] == ["billing", "stripe"] and candidate["paths"] == ["api/tax.py"]
    entries, _ = proposals.draft(store, [candidate])
    assert entries[0].verdict.kind == "UPDATE" and entries[0].verdict.id == "tax-per-line"


def test_once_merged_the_other_is_contained_and_can_be_retired(tmp_path: Path) -> None:
    store = _store(tmp_path)
    merged = merge_candidate(_pairs(store)[0])
    write_memory(
        tmp_path,
        "tax-per-line",
        title=merged["title"],
        body=merged["body"] + "\n",
        tags=merged["tags"],
        paths=merged["paths"],
        updated="2026-12-02T00:00:00Z",
    )
    pair = _pairs(store)[0]
    assert (pair.keeper.id, pair.other.id) == ("tax-per-line", "line-tax-rounding")
    assert pair.contained
