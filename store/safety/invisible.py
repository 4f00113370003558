"""Characters a human cannot see (SPEC §4.1 "every field that is written is shown").

A field that holds them reads one way in the preview and another way to the model that later
loads the memory: Unicode tag characters (U+E0000–U+E007F) spell text that models decode and
hosts do not display, bidirectional controls reorder what is shown. engram refuses such a
field (ENGRAM_VALIDATION, naming the field and the character) rather than stripping it:
stripping would write something other than what the agent sent, and a hidden payload is worth
surfacing; the fix is to resend the text without it.

Invisible here means every format character (Unicode category Cf: tags, bidi embeddings,
overrides, isolates and marks, zero-width space, word joiner, BOM, soft hyphen, …) and the
Hangul fillers (U+3164, U+115F, U+1160, U+FFA0), which render as blank. The one exception:
a zero-width joiner or non-joiner (U+200D, U+200C) between two visible characters is kept,
because emoji sequences and Persian, Arabic and Indic words need it; one standing next to a
space, at an edge or next to another invisible character is refused. An HTML character reference
to any of them (`&#x202E;`, `&shy;`) is refused too (`invisible_reference`): markdown renders it
as the character.

Redaction is blind to all of them (`Matchable`): a joiner kept between two letters would
otherwise split a token so that no rule sees it. It matches on the text less every invisible
character, variation selectors and the combining grapheme joiner too (they stand invisibly
after any letter), and replaces the secret together with whatever was hidden inside it.
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
