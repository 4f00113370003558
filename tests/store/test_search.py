"""BM25 search (SPEC §3.1) on the fixture workspace and on small hand-built stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.store import Store
from tests.conftest import FIXTURES
from tests.store.helpers import write_memory

QUERIES = json.loads((FIXTURES / "queries.json").read_text(encoding="utf-8"))


def test_every_fixture_query_finds_its_expected_memory_in_the_top_3(workspace: Path) -> None:
    """Recall on fixtures/queries.json: each expected id is among the first three results."""
    store = Store(workspace)
    misses = []
    for case in QUERIES:
        top3 = [entry.id for entry in store.search(case["query"], limit=3)]
        for expected in case["expect_top3"]:
            if expected not in top3:
                misses.append((case["query"], expected, top3))
    assert misses == []


def _filler(root: Path) -> None:
    for n, word in enumerate(["alpha", "bravo", "charlie", "delta"]):
        write_memory(
            root, f"filler-{n}", title=f"Filler {word}", body=f"Nothing about the topic, only {word}.\n"
        )


def test_title_and_tag_hits_outrank_body_only_hits(empty_workspace: Path) -> None:
    """A word in the title or the tags scores above the same word only in a body."""
    _filler(empty_workspace)
    write_memory(empty_workspace, "b-body", title="Unrelated heading", body="Mentions zebra once.\n")
    write_memory(empty_workspace, "c-title", title="Zebra crossing", body="Mentions nothing else.\n")
    write_memory(empty_workspace, "d-tag", title="Another heading", tags=["zebra"], body="Plain.\n")
    ids = [entry.id for entry in Store(empty_workspace).search("zebra")]
    assert ids.index("c-title") < ids.index("b-body")
    assert ids.index("d-tag") < ids.index("b-body")


def test_results_carry_the_documented_fields(workspace: Path) -> None:
    """Each result has id, type, scope, score, title and a snippet of at most ~160 characters."""
    entries = Store(workspace).search("webhook retry backoff")
    assert entries
    first = entries[0]
    assert first.id == "payment-webhook-retry-backoff"
    assert first.type == "fact" and first.scope == "project" and first.score > 0
    assert first.title
    assert 0 < len(first.snippet) <= 162
    assert [e.score for e in entries] == sorted((e.score for e in entries), reverse=True)


def test_superseded_memories_are_excluded_unless_asked(workspace: Path) -> None:
    """A superseded memory appears only with include_superseded."""
    store = Store(workspace)
    assert "use-pip-tools-for-locking" not in [
        e.id for e in store.search("pip-compile pip-tools requirements")
    ]
    asked = [e.id for e in store.search("pip-compile pip-tools requirements", include_superseded=True)]
    assert "use-pip-tools-for-locking" in asked


def test_expired_notes_are_never_returned(workspace: Path) -> None:
    """A working note past valid_until is invisible to search, whatever the flags."""
    store = Store(workspace)
    for flags in ({}, {"include_notes": True, "include_superseded": True}):
        ids = [e.id for e in store.search("Stripe API upgrade scratch PaymentIntent", limit=50, **flags)]
        assert "stripe-api-upgrade-scratch" not in ids


def test_notes_are_excluded_with_include_notes_false(workspace: Path) -> None:
    """Live notes are searchable by default and left out with include_notes=False."""
    store = Store(workspace)
    query = "backfill historical tax rates batches"
    assert "tax-rate-backfill-progress" in [e.id for e in store.search(query)]
    assert "tax-rate-backfill-progress" not in [e.id for e in store.search(query, include_notes=False)]


def test_type_filter_keeps_only_those_types(workspace: Path) -> None:
    """types=(...) returns only memories of those types."""
    entries = Store(workspace).search("python", types=("rule", "gotcha"), limit=50)
    assert entries
    assert {e.type for e in entries} <= {"rule", "gotcha"}


@pytest.mark.parametrize("scope", ["project", "user"])
def test_scope_filter_keeps_only_that_scope(workspace: Path, scope: str) -> None:
    """scope= returns only memories of that scope."""
    entries = Store(workspace).search("pytest python tooling", scope=scope, limit=50)
    assert entries
    assert {e.scope for e in entries} == {scope}


def test_ties_are_broken_by_id(empty_workspace: Path) -> None:
    """Equal scores come back in id order."""
    _filler(empty_workspace)
    for memory_id in ("m-zulu", "m-alpha", "m-mike"):
        write_memory(empty_workspace, memory_id, title="Same title", body="Identical quokka body.\n")
    entries = Store(empty_workspace).search("quokka")
    assert [e.id for e in entries] == ["m-alpha", "m-mike", "m-zulu"]
    assert len({e.score for e in entries}) == 1


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_limit_is_respected(workspace: Path, limit: int) -> None:
    """No more than `limit` results."""
    assert len(Store(workspace).search("python api database", limit=limit)) == limit


def test_an_empty_store_returns_no_results(empty_workspace: Path) -> None:
    """No .engram/ at all: search returns [] without error."""
    assert Store(empty_workspace).search("anything at all") == []


def test_a_query_of_only_stop_words_returns_no_results(workspace: Path) -> None:
    """A query that tokenises to nothing matches nothing."""
    assert Store(workspace).search("the and of") == []
