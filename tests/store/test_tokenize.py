"""Search tokens (SPEC §3.1): identifiers and paths split into parts as well as whole."""

from __future__ import annotations

from store.search.tokenize import tokenize


def test_camel_case_gives_the_whole_and_its_parts() -> None:
    """`InvoiceService` → whole, then `invoice`, `service`."""
    assert tokenize("InvoiceService") == ["invoiceservice", "invoice", "service"]


def test_snake_case_gives_the_whole_and_its_parts() -> None:
    """`retry_backoff_ms` → whole, then its parts."""
    assert tokenize("retry_backoff_ms") == ["retry_backoff_ms", "retry", "backoff", "ms"]


def test_kebab_case_gives_the_whole_and_its_parts() -> None:
    """`use-uv-for-python` → whole, then parts (stop word `for` dropped)."""
    assert tokenize("use-uv-for-python") == ["use-uv-for-python", "use", "uv", "python"]


def test_paths_give_the_whole_and_their_parts() -> None:
    """`api/billing/tax.py` → whole path, then each part."""
    assert tokenize("api/billing/tax.py") == ["api/billing/tax.py", "api", "billing", "tax", "py"]


def test_text_is_lower_cased() -> None:
    """Plain words are lower-cased."""
    assert tokenize("Rollback DEPLOY") == ["rollback", "deploy"]


def test_acronyms_split_from_camel_case() -> None:
    """An upper-case run before a capitalised word is its own part."""
    assert tokenize("HTTPServer") == ["httpserver", "http", "server"]


def test_stop_words_are_dropped() -> None:
    """Short function words carry no signal."""
    assert tokenize("the test is in a file of the repo") == ["test", "file", "repo"]


def test_non_ascii_words_are_kept_whole() -> None:
    """Words of other scripts are kept whole, not split or dropped."""
    assert tokenize("Größe naïve Привет 日本語") == ["größe", "naïve", "привет", "日本語"]


def test_punctuation_alone_gives_no_tokens() -> None:
    """Nothing but punctuation yields no tokens."""
    assert tokenize("... --- !!! ???") == []
