"""Instruction-like lines in a working note (SPEC §4.4): found on folded text, named as written.

The rest, and why: docs/design.md, `store/safety/instructions.py`.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
import unicodedata
from functools import cache
from typing import Final

from store.safety.instruction_patterns import LINE, TEXT

_FILLERS: Final = "\u3164\u115f\u1160\uffa0\u2800"
_FILLER_AS_SPACE: Final = str.maketrans(dict.fromkeys(_FILLERS, " "))
_FILLER_AS_NOTHING: Final = str.maketrans(dict.fromkeys(_FILLERS, None))
_DROPPED: Final = frozenset("\u0640\u034f")  # tatweel, combining grapheme joiner
_LOOK_ALIKES: Final = str.maketrans(
    # Cyrillic
    "аеорсухіјѕԁԛԝһӏвкмнтАВЕКМНОРСТУХІЈЅ"
    # Greek
    "αβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
    # Armenian, dotless i and j, Latin letters that pass for others
    "օսոհցıȷɑɡℓ"
    # small capitals
    "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ"
    # apostrophes
    "‘’ʼ′",
    "aeopcyxijsdqwhlbkmhtABEKMHOPCTYXIJSabeikvoptuxABEZHIKMNOPTYXounhgijaglabcdefghijklmnoprstuvwyz''''",
)


def _letters(text: str) -> str:
    """NFKC, no format characters or tatweel, no accents, look-alikes folded, lower case."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf" and ch not in _DROPPED)
    text = "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")
    return unicodedata.normalize("NFC", text).translate(_LOOK_ALIKES).lower()


def normalise(line: str, *, fillers: str = " ") -> str:
    """The line as the filter reads it (see the module docstring); `fillers` is what a Hangul
    filler reads as: a space or nothing ("")."""
    text = line.translate(_FILLER_AS_SPACE if fillers else _FILLER_AS_NOTHING)
    return " ".join(_letters(text).split())


def _rx(source: str) -> re.Pattern[str]:
    """A pattern whose non-ASCII words are folded as the text is (ASCII syntax kept as is)."""
    return re.compile(re.sub(r"[^\x00-\x7f]+", lambda m: _letters(m.group()), source))


@cache
def _line_patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(_rx(p) for p in LINE)


@cache
def _text_patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(_rx(p) for p in TEXT)


def _first(lines: list[str], fillers: str) -> tuple[int, int] | None:
    """The first (start, end) line index pair a pattern matches, in one reading of the note."""
    folded = [normalise(line, fillers=fillers) for line in lines]
    best: tuple[int, int] | None = None
    for index, text in enumerate(folded):
        if text and any(p.search(text) for p in _line_patterns()):
            best = (index, index)
            break
    starts: list[int] = []
    owners: list[int] = []
    offset = 0
    for index, text in enumerate(folded):
        if text:
            starts.append(offset)
            owners.append(index)
            offset += len(text) + 1
    joined = " ".join(text for text in folded if text)
    for pattern in _text_patterns():
        match = pattern.search(joined)
        if match is None:
            continue
        span = (
            owners[bisect.bisect_right(starts, match.start()) - 1],
            owners[bisect.bisect_right(starts, max(match.end() - 1, match.start())) - 1],
        )
        if best is None or span < best:
            best = span
    return best


_BASE64: Final = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


def _decoded(line: str) -> list[str]:
    """Text hidden in the line as base64 (a model reads it as easily as the plain words)."""
    found = []
    for token in _BASE64.findall(line):
        try:
            bare = token.rstrip("=").replace("-", "+").replace("_", "/")
            raw = base64.b64decode(bare + "=" * (-len(bare) % 4), validate=True)
            text = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if " " in text and all(ch.isprintable() or ch in "\n\t" for ch in text):
            found.append(text)
    return found


def instruction_line(text: str) -> tuple[int, str] | None:
    """The first line that reads like an instruction to the agent, with its 1-based number, as
    it was written (stripped of surrounding white space only). A phrase split over several lines
    (blank ones too) is named by its first line and returned whole, its lines joined by newlines."""
    lines = text.splitlines()
    found = [span for fillers in (" ", "") if (span := _first(lines, fillers)) is not None]
    found += [
        (index, index)
        for index, line in enumerate(lines)
        if any(_first(hidden.splitlines(), " ") is not None for hidden in _decoded(line))
    ]
    if not found:
        return None
    start, end = min(found)
    return start + 1, "\n".join(line.strip() for line in lines[start : end + 1])
