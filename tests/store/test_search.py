"""BM25 search (SPEC §3.1) on the fixture workspace and on small hand-built stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.store import Store
from tests.support.paths import FIXTURES
from tests.support.store_helpers import write_memory

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


def test_four_memories_two_with_sqlite_finds_both(empty_workspace: Path) -> None:
    """Issue 10: a term in half the memories (BM25Okapi's idf is 0 there) still finds them."""
    write_memory(empty_workspace, "store-engine", title="Storage engine", body="We keep state in SQLite.\n")
    write_memory(
        empty_workspace, "test-db", title="Test database", body="Tests run on an in-memory sqlite.\n"
    )
    write_memory(empty_workspace, "queue", title="Job queue", body="Jobs go through Redis streams.\n")
    write_memory(empty_workspace, "cache", title="Cache", body="Memcached holds rendered pages.\n")
    assert sorted(e.id for e in Store(empty_workspace).search("sqlite")) == ["store-engine", "test-db"]


@pytest.mark.parametrize("size", [1, 2])
def test_one_or_two_memories_are_found_by_a_word_they_share(empty_workspace: Path, size: int) -> None:
    """With one or two memories, a word every memory holds finds every memory."""
    for n in range(size):
        write_memory(empty_workspace, f"m{n}", title=f"Deploy note {n}", body="Deploys go through Argo.\n")
    assert sorted(e.id for e in Store(empty_workspace).search("argo")) == [f"m{n}" for n in range(size)]


def test_another_form_of_a_word_finds_the_memory(empty_workspace: Path) -> None:
    """Stems alongside words: `indexing` finds a memory that says `indexed`, and the exact
    form still ranks first."""
    _filler(empty_workspace)
    write_memory(empty_workspace, "indexed", title="Search", body="Every file is indexed on save.\n")
    write_memory(empty_workspace, "indexing", title="Search", body="Incremental indexing on save.\n")
    ids = [e.id for e in Store(empty_workspace).search("indexing")]
    assert ids == ["indexing", "indexed"]


def test_a_plain_word_reaches_an_identifier_part_but_not_the_reverse(empty_workspace: Path) -> None:
    """`invoices` finds a memory that names `InvoiceService` (its parts are stemmed in the
    index); the identifier `tide/commands` asked for is matched as written, so the memory that
    names it ranks above one that only says `command` in its title."""
    _filler(empty_workspace)
    write_memory(empty_workspace, "layering", title="Layering", body="Handlers call InvoiceService only.\n")
    write_memory(
        empty_workspace, "cli-layout", title="CLI layout", body="Subcommands live in tide/commands.\n"
    )
    write_memory(
        empty_workspace, "add-command", title="Add a command", body="Copy an existing command module.\n"
    )
    store = Store(empty_workspace)
    assert [e.id for e in store.search("invoices")] == ["layering"]
    assert [e.id for e in store.search("tide/commands")] == ["cli-layout"]


def test_an_old_format_saved_index_is_rebuilt_not_misread(empty_workspace: Path) -> None:
    """A search.idx written before stems existed (same memories, same content hashes, a valid
    tag of this user's engram) is rebuilt on open, never read as if it held stems: a stemmed
    query finds the memory."""
    from store.search import bm25
    from store.search.lexical import key_of
    from store.search.tokenize import tokenize

    write_memory(empty_workspace, "indexed", title="Search", body="Every file is indexed on save.\n")
    _filler(empty_workspace)
    store = Store(empty_workspace)
    old = bm25.InvertedIndex()
    for memory in store.view().durable.values():
        title, tags = tokenize(memory.title), tokenize(" ".join(memory.tags))
        old.add(key_of(memory), title * 3 + tags * 2 + tokenize(memory.body), tag=memory.hash)
    data = bm25.dump(old)
    old_format = b"ENGRAM-BM25-2\n" + data[data.index(b"\n") + 1 :]
    cache = empty_workspace / ".engram" / "search.idx"
    cache.write_bytes(bm25.tagged(old_format, store.key()))
    with pytest.raises(ValueError, match="not an engram search index"):
        bm25.load_tagged(cache, store.key())  # the tag checks: only the format refuses it
    assert [e.id for e in Store(empty_workspace).search("indexing")] == ["indexed"]


def test_bm25_scores_come_per_memory_before_ranking(empty_workspace: Path) -> None:
    """The search index gives raw BM25 scores per memory key (where a second signal can be
    fused) and ranks any such scores into hits, best first, ties by id."""
    from store.search.lexical import SearchIndex, key_of

    _filler(empty_workspace)
    store = Store(empty_workspace)
    memories = list(store.view().durable.values())
    index = SearchIndex(None)
    index.sync(memories)
    scores = index.bm25_scores("filler bravo")
    assert set(scores) == {key_of(m) for m in memories}
    assert all(v > 0 for v in scores.values())
    hits = index.rank(scores)
    assert hits[0].memory.id == "filler-1"
    assert [h.memory.id for h in hits] == [h.memory.id for h in index.search("filler bravo")]


def test_snippet_stems_only_words_that_can_hold_a_query_term() -> None:
    """The snippet's shortcut (a word is stemmed only when it contains a query term's first two
    letters) picks the same stretch as stemming every word, on every eval memory and query."""
    from store.files.memory import body_of
    from store.search import lexical

    def every_word(body: str, query: str) -> str:
        real = lexical._hits
        lexical._hits = lambda word, wanted, heads: lexical._word_terms(word) & wanted  # type: ignore[assignment]
        try:
            return lexical.snippet(body, query)
        finally:
            lexical._hits = real  # type: ignore[assignment]

    bodies = [body_of(p.read_text()) for p in sorted((FIXTURES / "eval" / "memory").glob("*.md"))]
    queries = [
        json.loads(line)["query"] for line in (FIXTURES / "eval" / "queries.jsonl").read_text().splitlines()
    ]
    assert len(bodies) >= 200 and len(queries) >= 120
    long = [b for b in bodies if len(" ".join(b.split())) > lexical.SNIPPET_CHARS]
    assert len(long) >= 50
    for query in queries:
        for body in long[:: len(long) // 20][:20]:  # 20 long bodies from across the set
            assert lexical.snippet(body, query) == every_word(body, query), (query, body[:80])


@pytest.mark.parametrize("seed", range(4))
def test_every_stem_has_a_head_its_word_contains(seed: int) -> None:
    """What the snippet shortcut relies on, over random words and Snowball's exceptions."""
    import random

    from store.search.lexical import _heads
    from store.search.tokenize import stem

    rnd = random.Random(seed)
    letters = "aeiouyslnedgbtrcwhkpmf"
    words = {"".join(rnd.choice(letters) for _ in range(rnd.randint(1, 14))) for _ in range(20000)}
    words |= {"skies", "dying", "lying", "tying", "idly", "gently", "early", "only", "oed", "news", "yelled"}
    assert [w for w in words if not any(head in w for head in _heads(stem(w)))] == []


def test_a_superseded_memorys_match_finds_the_memory_that_replaced_it(
    empty_workspace: Path, engram_home: Path
) -> None:
    """Words only the old decision holds (`pip-compile`) find the one in force, through a chain
    of replacements; the superseded memories themselves stay out unless asked for."""
    ws = empty_workspace
    write_memory(
        ws,
        "lock-with-pip-tools",
        title="Lock dependencies with pip-compile",
        body="Run pip-compile on requirements.in.\n",
        status="superseded",
        superseded_by="lock-with-poetry",
    )
    write_memory(
        ws,
        "lock-with-poetry",
        title="Lock dependencies with poetry",
        body="poetry lock writes poetry.lock.\n",
        status="superseded",
        superseded_by="use-uv-for-locking",
        supersedes=["lock-with-pip-tools"],
    )
    write_memory(
        ws,
        "use-uv-for-locking",
        title="Use uv for Python environments",
        body="uv sync creates .venv from uv.lock.\n",
        supersedes=["lock-with-poetry"],
    )
    write_memory(ws, "pip-mirror", title="The pip mirror", body="pip reads the internal mirror.\n")
    store = Store(ws)
    found = store.search("pip-compile requirements")
    assert [e.id for e in found] == ["use-uv-for-locking", "pip-mirror"]
    with_old = [e.id for e in store.search("pip-compile requirements", include_superseded=True)]
    assert with_old[0] in ("lock-with-pip-tools", "use-uv-for-locking")
    assert {"lock-with-pip-tools", "use-uv-for-locking", "pip-mirror"} <= set(with_old)
    assert [e.id for e in store.search("uv sync")] == ["use-uv-for-locking"]


def test_a_memorys_counts_are_its_tokens_counted_in_the_same_order(workspace: Path) -> None:
    """The index is built from `document_counts`, one-at-a-time adds were from the token list:
    the same counts with keys in the same first-seen order, so both lay terms out alike."""
    from collections import Counter

    from store.search.lexical import document_counts, document_tokens

    for memory in Store(workspace).view().durable.values():
        counted = Counter(document_tokens(memory))
        assert list(document_counts(memory).items()) == list(counted.items())
