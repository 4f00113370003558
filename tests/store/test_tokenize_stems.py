"""Stems alongside words (SPEC §3.1): each word is a search term as itself and as its Snowball
English stem, never replaced by it."""

from __future__ import annotations

import pytest

from store.search.tokenize import stem, terms, tokenize


def test_a_word_is_followed_by_its_stem_when_that_differs() -> None:
    """`indexing` gives `indexing index`; `index` (its own stem) gives only itself."""
    assert terms("indexing") == ["indexing", "index"]
    assert terms("indexed") == ["indexed", "index"]
    assert terms("index") == ["index"]


def test_words_are_kept_alongside_their_stems() -> None:
    """The word itself stays a term: stems are added, never substituted."""
    found = terms("Databases are running")
    assert found == ["databases", "databas", "running", "run"]
    assert set(tokenize("Databases are running")) <= set(found)


def test_identifier_parts_are_stemmed_in_memories_but_the_whole_never() -> None:
    """A compound keeps its whole form, unstemmed; its word parts get stems in a memory."""
    assert terms("InvoiceService") == [
        "invoiceservice",
        "InvoiceService",
        "invoice",
        "invoic",
        "service",
        "servic",
    ]


def test_a_query_identifier_is_matched_as_written() -> None:
    """In a query, a compound's parts are not stemmed (plain words still are)."""
    assert terms("tide/commands sending", query=True) == [
        "tide/commands",
        "tide",
        "commands",
        "sending",
        "send",
    ]
    assert terms("InvoiceService", query=True) == ["invoiceservice", "InvoiceService", "invoice", "service"]


def test_numbers_paths_and_other_scripts_are_their_own_stems() -> None:
    """Only plain ASCII words are stemmed: numbers, paths and non-English words stay whole."""
    assert stem("5432") == "5432"
    assert stem("api/billing/tax.py") == "api/billing/tax.py"
    assert stem("größe") == "größe"
    assert terms("5432 größe") == ["5432", "größe"]


def test_stems_are_cached_per_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stemmer runs once per distinct word (a bounded cache), not once per occurrence."""
    import store.search.tokenize as tokenize_module

    calls: list[str] = []
    stem.cache_clear()
    stem("warming")  # the real stemmer is made on first use
    real = tokenize_module._STEMMER

    class Counting:
        def stemWord(self, word: str) -> str:  # noqa: N802 - snowballstemmer's name
            calls.append(word)
            found: str = real.stemWord(word)
            return found

    monkeypatch.setattr(tokenize_module, "_STEMMER", Counting())
    stem.cache_clear()
    tokenize_module._raw_terms.cache_clear()
    for _ in range(3):
        assert terms("caching cached caches, caching") == [
            "caching",
            "cach",
            "cached",
            "cach",
            "caches",
            "cach",
            "caching",
            "cach",
        ]
    assert sorted(calls) == ["cached", "caches", "caching"]
    assert stem.cache_info().maxsize is not None
    stem.cache_clear()
    tokenize_module._raw_terms.cache_clear()


def test_a_word_written_in_a_case_of_its_own_is_also_a_term_as_written() -> None:
    """Acronyms and identifiers with a capital after the first letter (`INV`, `TIDE_ENV`,
    `OpenSearch`) are matched as written too, in memories and queries alike; a capitalised
    word (`Invoice`) and lower-case text are not."""
    assert terms("INV-<country>") == ["inv", "INV", "country", "countri"]
    assert terms("INV-", query=True) == ["inv", "INV"]
    assert "TIDE_ENV" in terms("TIDE_ENV selects it")
    assert "OpenSearch" in terms("OpenSearch", query=True)
    assert terms("Invoice inv_") == ["invoice", "invoic", "inv_", "inv"]
    assert terms("THE IS") == []  # a stop word stays dropped in any case


def test_word_groups_pair_each_distinct_word_with_its_stem() -> None:
    from store.search.tokenize import word_groups

    assert word_groups("orders-api port ports") == [
        ("orders-api",),
        ("orders", "order"),
        ("api",),
        ("port",),
        ("ports", "port"),
    ]
    assert word_groups("the and") == []
