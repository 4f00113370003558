"""The token pattern that does not backtrack gives exactly the tokens of the one it replaced.

`REFERENCE` is the earlier pattern, kept here as the definition: a raw token starts and ends
with a word character and holds only word characters, `.`, `/` and `-` in between. Every raw
token, and so every token and search term, must be the same on the labelled corpus and on
generated text full of the edges: separators at the ends and in runs, paths, identifiers,
digits, underscores, non-ASCII letters and digits, combining marks, invisible characters.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from store.search import tokenize as tokens

REFERENCE = re.compile(r"\w(?:[\w./\-]*\w)?")
EVAL = Path(__file__).resolve().parents[2] / "fixtures" / "eval"
EDGES = "./-_ \t\n:;,!?'\"()[]{}<>@#$%^&*+=|\\~`aZ09éßİıÅ文字٣߀ǅ\u0301\u200b\u00ad\u3164"


def _reference_terms(text: str, *, query: bool = False) -> list[str]:
    return [term for raw in REFERENCE.findall(text) for term in tokens._raw_terms(raw, query)]


def _same(text: str) -> None:
    assert tokens.raw_tokens(text) == REFERENCE.findall(text)
    assert tokens.terms(text) == _reference_terms(text)
    assert tokens.terms(text, query=True) == _reference_terms(text, query=True)


def test_the_eval_corpus_gives_the_same_tokens() -> None:
    files = sorted(EVAL.rglob("*.md")) + sorted(EVAL.rglob("*.json*"))
    assert len(files) > 20
    for path in files:
        _same(path.read_text(encoding="utf-8"))


def test_the_edges_give_the_same_tokens() -> None:
    for text in (
        "",
        "-",
        "a",
        "a-",
        "-a",
        "a--b",
        "a-/.b.",
        "api/billing/tax.py.",
        "./x/../y_z",
        "v1.2.3-rc.1...",
        "InvoiceService.retry_backoff_ms()",
        "größe/straße-ß",
        "é-",
        "文字.py",
        "x\u0301-y",
        "__init__.py",
        "a" * 5000 + "-" * 5000,
    ):
        _same(text)


@settings(max_examples=max(200, int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "200"))), deadline=None)
@given(st.text(alphabet=st.sampled_from(EDGES), max_size=80) | st.text(max_size=80))
def test_generated_text_gives_the_same_tokens(text: str) -> None:
    _same(text)
