"""Characters a human cannot see (SPEC §4.1 "every field that is written is shown").

The rest, and why: docs/design.md, `store/safety/invisible.py`.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from typing import Final

HANGUL_FILLERS: Final = frozenset("\u3164\u115f\u1160\uffa0")
IGNORABLE_MARKS: Final = frozenset("\u034f\u17b4\u17b5\u180b\u180c\u180d\u180f")
"""Default-ignorable characters outside category Cf that render as nothing wherever they
stand: the combining grapheme joiner, the Khmer inherent vowels, the Mongolian free variation
selectors (a token split by U+17B4 passed both this check and redaction)."""
_JOINERS: Final = frozenset("\u200c\u200d")
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")


def is_invisible(ch: str) -> bool:
    """A format character or a Hangul filler (joiners included; see `first_invisible`)."""
    return ch in HANGUL_FILLERS or ch in IGNORABLE_MARKS or unicodedata.category(ch) == "Cf"


def _visible(ch: str) -> bool:
    return not ch.isspace() and not is_invisible(ch) and unicodedata.category(ch) != "Cc"


def first_invisible(text: str) -> str | None:
    """The first character of `text` a human would not see, or None (module docstring).

    No ASCII character is a format character or a filler, so only the non-ASCII ones are
    looked at, and ASCII text (most fields) is answered without a loop: this runs on every
    field of every memory a fresh build parses."""
    if text.isascii():
        return None
    for match in _NON_ASCII.finditer(text):
        ch, i = match.group(), match.start()
        if is_invisible(ch) and not _joining(text, i):
            return ch
    return None


_REFERENCE: Final = re.compile(r"&(?:#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8}|[A-Za-z][A-Za-z0-9]{1,31});")


def invisible_reference(text: str) -> str | None:
    """The first HTML character reference in `text` that names an invisible character (`&#x202E;`,
    `&shy;`, `&ZeroWidthSpace;`), or None: markdown turns a reference into its character, so a
    field holding one shows that character wherever it is rendered (a viewer, a code host, the
    review page once), though every check of the text itself saw only ASCII."""
    if "&" not in text:
        return None
    for match in _REFERENCE.finditer(text):
        meant = html.unescape(match.group())
        if meant != match.group() and any(is_invisible(ch) for ch in meant):
            return match.group()
    return None


def _joining(text: str, i: int) -> bool:
    """A joiner between two visible characters (emoji sequences, Persian and Indic words)."""
    return text[i] in _JOINERS and 0 < i < len(text) - 1 and _visible(text[i - 1]) and _visible(text[i + 1])


def without_invisible(text: str) -> str:
    """`text` less every character `first_invisible` would refuse: for mined session lines,
    which are the human's own transcript (a stray zero-width space from a paste must not refuse
    the whole save-session), never for what an agent proposes."""
    if text.isascii():
        return text
    return "".join(ch for i, ch in enumerate(text) if not is_invisible(ch) or _joining(text, i))


def describe(ch: str) -> str:
    """`U+202E (RIGHT-TO-LEFT OVERRIDE)` for a refusal message."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")


def _blind(ch: str) -> bool:
    """Invisible to a reader, so redaction must not see it either: format characters, Hangul
    fillers, variation selectors, the combining grapheme joiner."""
    return (
        is_invisible(ch) or "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef" or ch == "\u034f"
    )


class Matchable:
    """`text` as redaction matches it: `flat` is `text` less its invisible characters, and
    `origin(i)` is where `flat[i]` stands in `text`."""

    __slots__ = ("flat", "_gaps")

    def __init__(self, text: str) -> None:
        dropped = (
            [] if text.isascii() else [m.start() for m in _NON_ASCII.finditer(text) if _blind(m.group())]
        )
        # the k-th dropped character stood just before flat[dropped[k] - k]
        self._gaps = [at - k for k, at in enumerate(dropped)]
        if dropped:
            edges = [-1, *dropped, len(text)]
            text = "".join(text[a + 1 : b] for a, b in zip(edges, edges[1:], strict=False))
        self.flat = text

    def origin(self, i: int) -> int:
        return i + bisect.bisect_right(self._gaps, i)

    @property
    def changed(self) -> bool:
        return bool(self._gaps)
