"""Search tokens (SPEC §3.1): lower-case words, with identifiers and paths split into parts too.

`InvoiceService` gives `invoiceservice invoice service`; `api/billing/tax.py` gives the whole
path and `api billing tax py`; `retry_backoff_ms` gives the whole and `retry backoff ms`.

Search terms (`terms`) add each word's Snowball English stem right after the word when it
differs: `indexing` gives `indexing index`, so a query for `indexing` finds `indexed`. Stems
are added alongside words, never instead of them (measured: replacing words loses recall).
Only plain ASCII words are stemmed (numbers, paths and other scripts are their own stems), and
a compound only in its parts, only in memories (see `terms`).
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from itertools import chain, repeat
from typing import Any, Final

import snowballstemmer

STOP_WORDS: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
    ]
)
FUNCTION_WORDS: Final = STOP_WORDS | frozenset(
    [
        "about",
        "after",
        "again",
        "all",
        "also",
        "am",
        "any",
        "because",
        "been",
        "before",
        "being",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "each",
        "else",
        "every",
        "get",
        "gets",
        "got",
        "had",
        "how",
        "i",
        "if",
        "just",
        "let",
        "me",
        "might",
        "more",
        "most",
        "much",
        "must",
        "my",
        "need",
        "needs",
        "no",
        "not",
        "now",
        "our",
        "ours",
        "please",
        "same",
        "shall",
        "should",
        "so",
        "some",
        "such",
        "than",
        "them",
        "they",
        "those",
        "though",
        "up",
        "us",
        "very",
        "via",
        "want",
        "wants",
        "we",
        "what",
        "when",
        "where",
        "whether",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "would",
        "you",
        "your",
        "yours",
    ]
)
"""Words that say how a question is asked, not what it is about: search's confidence
(store.search.confidence) gives them no weight. BM25's own terms keep them (STOP_WORDS is all it
drops), so every score is what it was."""
_TOKEN: Final = re.compile(r"\w++(?:[./\-]++\w++)*+")
r"""A raw token: word characters, joined by runs of `.`, `/` or `-` (never at an edge). Written
with possessive quantifiers so the engine never backtracks: the earlier `\w(?:[\w./\-]*\w)?`
gave the same tokens but stepped back over the last character of every one (about a fifth of a
fresh build's tokenizing)."""
_ASCII_TOKEN: Final = re.compile(r"[0-9A-Za-z_]++(?:[./\-]++[0-9A-Za-z_]++)*+")
r"""`_TOKEN` for ASCII text, where `\w` is exactly this class and a plain class is faster."""
_SEPARATORS: Final = re.compile(r"[/._\-]+")
_CAMEL: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_DIGITS: Final = re.compile(r"[0-9]+")
_CASED: Final = re.compile(r"\w[A-Z]")
"""A capital after the first character: an acronym or identifier written in a case of its own."""
_STEMMER: Any = None
"""snowballstemmer's English stemmer, made on first use (its import is slow)."""
_STEMMER_LOCK: Final = threading.Lock()
STEM_CACHE: Final = 1 << 16
"""Distinct words whose stems are remembered (a store's vocabulary is usually far smaller)."""
TOKEN_CACHE: Final = 1 << 16
"""Distinct raw tokens whose tokens and terms are remembered (the same words recur)."""


def tokenize(text: str) -> list[str]:
    """Tokens in order of appearance; a compound adds its parts right after itself."""
    return list(chain.from_iterable(map(_raw_tokens, raw_tokens(text))))


def raw_tokens(text: str) -> list[str]:
    """The raw tokens of `text` in order, as written (`_TOKEN`)."""
    return (_ASCII_TOKEN if text.isascii() else _TOKEN).findall(text)


@lru_cache(maxsize=TOKEN_CACHE)
def _raw_tokens(raw: str) -> tuple[str, ...]:
    whole, parts = _pieces(raw)
    head = () if whole in STOP_WORDS else (whole,)
    return head + tuple(p for p in parts if p not in STOP_WORDS)


def _pieces(raw: str) -> tuple[str, list[str]]:
    """A raw token lower-cased, and its parts when it is a compound (else no parts)."""
    whole = raw.lower()
    parts = [p.lower() for piece in _SEPARATORS.split(raw) if piece for p in _split_case(piece)]
    if len(parts) > 1 or (parts and parts[0] != whole):
        return whole, parts
    return whole, []


@lru_cache(maxsize=STEM_CACHE)
def stem(token: str) -> str:
    """The Snowball English stem of a plain ASCII word; any other token is its own stem."""
    if not (token.isascii() and token.isalpha()):
        return token
    global _STEMMER
    with _STEMMER_LOCK:  # a stemmer object keeps state between calls: one caller at a time
        if _STEMMER is None:
            _STEMMER = snowballstemmer.stemmer("english")
        found: str = _STEMMER.stemWord(token)
    return found


def terms(text: str, *, query: bool = False) -> list[str]:
    """Search terms: the tokens in order, each word followed by its stem when that differs.

    A compound's whole (`invoiceservice`, `tide/commands`) is never stemmed. In a memory its
    parts are (`InvoiceService` → `invoice invoic service servic`), so a query for `invoices`
    reaches it; in a query (`query=True`) they are not: an identifier asked for is matched as
    written, and `tide/commands` does not reach every memory that says `command`."""
    return list(chain.from_iterable(map(_raw_terms, raw_tokens(text), repeat(query))))


@lru_cache(maxsize=TOKEN_CACHE)
def _raw_terms(raw: str, query: bool) -> tuple[str, ...]:
    whole, parts = _pieces(raw)
    out: list[str] = []
    if whole not in STOP_WORDS:
        out.append(whole)
        if not parts:
            _stemmed(out, whole)
        if _CASED.search(raw):
            out.append(raw)  # as written too: `INV`, `TIDE_ENV`, `OpenSearch`
    for part in parts:
        if part not in STOP_WORDS:
            out.append(part)
            if not query:
                _stemmed(out, part)
    return tuple(out)


def word_groups(text: str) -> list[tuple[str, ...]]:
    """Each distinct word of `text` (`tokenize`'s words: wholes and parts) with its stem: a memory
    holds the word when it holds either."""
    return [tuple(dict.fromkeys((word, stem(word)))) for word in dict.fromkeys(tokenize(text))]


def _stemmed(out: list[str], token: str) -> None:
    root = stem(token)
    if root != token:
        out.append(root)


def identifiers(text: str) -> list[str]:
    """The identifier-like tokens of `text`, lower-cased, with every digit run written `#`:
    compounds of `snake_case`, `camelCase`, dotted names and paths (`FOO_BAR`, `InvoiceService`,
    `api/tax.py`, `v1.2.3` as `v#.#.#`). A kebab compound counts only when it is not plain
    words (`rank-bm25` and `X-Request-ID` do, `well-known` does not). Digits are masked so a changed
    number is the same identifier with a new value, not another identifier."""
    found: list[str] = []
    for raw in raw_tokens(text):
        pieces = [piece for piece in _SEPARATORS.split(raw) if piece]
        parts = [p for piece in pieces for p in _split_case(piece)]
        if len(parts) < 2 or not any(p.isalpha() and len(p) > 1 for p in parts):
            continue
        if not _plain_words(raw):
            found.append(_DIGITS.sub("#", raw.lower()))
    return found


def _plain_words(raw: str) -> bool:
    """`well-known`, `Read-only`: hyphenated words, each lower-case or capitalised."""
    return all(
        word.isascii() and word.isalpha() and (word.islower() or (word[:1].isupper() and word[1:].islower()))
        for word in raw.split("-")
    )


def _split_case(piece: str) -> list[str]:
    """camelCase parts of an ASCII piece; other scripts have no case convention to split on."""
    return _CAMEL.findall(piece) if piece.isascii() else [piece]
