"""Search tokens (SPEC §3.1): lower-case words, with identifiers and paths split into parts too.

`InvoiceService` gives `invoiceservice invoice service`; `api/billing/tax.py` gives the whole
path and `api billing tax py`; `retry_backoff_ms` gives the whole and `retry backoff ms`.
"""

from __future__ import annotations

import re
from typing import Final

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
_TOKEN: Final = re.compile(r"\w(?:[\w./\-]*\w)?")
_SEPARATORS: Final = re.compile(r"[/._\-]+")
_CAMEL: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def tokenize(text: str) -> list[str]:
    """Tokens in order of appearance; a compound adds its parts right after itself."""
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        raw = match.group()
        whole = raw.lower()
        parts = [p.lower() for piece in _SEPARATORS.split(raw) if piece for p in _split_case(piece)]
        if whole not in STOP_WORDS:
            out.append(whole)
        if len(parts) > 1 or (parts and parts[0] != whole):
            out.extend(p for p in parts if p not in STOP_WORDS)
    return out


def _split_case(piece: str) -> list[str]:
    """camelCase parts of an ASCII piece; other scripts have no case convention to split on."""
    return _CAMEL.findall(piece) if piece.isascii() else [piece]
