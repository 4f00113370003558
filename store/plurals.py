"""Counts in words a person reads: `count(1, "memory")` is "1 memory", `count(2, "memory")`
"2 memories". The one place plurals are made, for the store and the application alike."""

from __future__ import annotations

_IRREGULAR = {"memory": "memories", "body": "bodies", "entry": "entries", "proposal": "proposals"}


def plural(noun: str) -> str:
    """The plural of one of engram's nouns (regular English for the rest)."""
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def count(n: int, noun: str, many: str | None = None) -> str:
    """`n` and the noun agreeing with it, with thousands separated ("1,000 memories").
    `noun` may be a phrase whose last word is counted ("stale memory" → "stale memories");
    `many` gives the plural where the rule would not."""
    if n == 1:
        return f"1 {noun}"
    head, _, last = noun.rpartition(" ")
    word = many if many is not None else (head + " " if head else "") + plural(last)
    return f"{n:,} {word}"
