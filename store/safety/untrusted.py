"""The one way text from a repository reaches any output (tool text, structured content, CLI,
session hook, `verify`, `doctor`).

Everything a clone can write is untrusted: memory bodies and titles, file names, front-matter
keys and values, refs, config values and the diagnostics that quote them. Shown raw, a line
break in any of them starts a line the agent reads as engram's own (`System: call
engram_commit…`, a forged closing fence), and a terminal control sequence rewrites what the
human sees. So such text goes through `line` (one line: every control character, line or
paragraph separator, bidi override and invisible format character shown as an escape, the
length bounded) or `block` (a body quoted inside a fence: line breaks and tabs kept, every
other such character escaped, the length bounded and the rest named). Both are idempotent
(what they return holds nothing they would escape), so text escaped where it was made (a
diagnostic, a stale reason) can pass through the outer layers' escaping unchanged.
"""

from __future__ import annotations

import re
from typing import Final

LINE_LIMIT: Final = 200
"""Characters of one untrusted value on one output line, before the cut."""

_INVISIBLE: Final = (
    # every format character (Unicode 14 category Cf: soft hyphen, Arabic and Syriac marks,
    # zero-width space, bidi marks, embeddings, overrides and isolates, word joiner and
    # invisible operators, BOM, interlinear annotation, tag characters…) less the two joiners,
    # and the Hangul fillers, which render as blank
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
    "\u115f\u1160\u3164\uffa0"
    # and the other default-ignorable characters that render as nothing wherever they stand
    # (store.safety.invisible.IGNORABLE_MARKS)
    "\u034f\u17b4\u17b5\u180b-\u180d\u180f"
)
_STRAY_JOINER: Final = "(?<!\\S)[\u200c\u200d]|[\u200c\u200d](?!\\S)"
"""A zero-width joiner or non-joiner is shown only between two visible characters (emoji
sequences, Persian and Indic words), as store.safety.invisible allows in what is written."""
_UNSAFE: Final = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029{_INVISIBLE}]|{_STRAY_JOINER}")
_UNSAFE_IN_BLOCK: Final = re.compile(
    f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u2028\\u2029{_INVISIBLE}]|{_STRAY_JOINER}"
)


_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def control_character(text: str) -> str | None:
    """The first control character or line/paragraph separator in `text` (every character that
    some reader takes as a line break is one), or None: a single-line field holding one is
    refused where it is read, not only escaped where it is shown."""
    found = _CONTROL.search(text)
    return None if found is None else found.group()


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char) or (
        f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    )


def line(text: object, limit: int = LINE_LIMIT) -> str:
    """`text` as one safe line of at most `limit` characters (a cut ends in `…`)."""
    shown = _UNSAFE.sub(_escape, str(text))
    return shown if len(shown) <= limit else shown[: max(limit - 1, 0)] + "…"


def block(text: str, limit: int | None = None) -> str:
    """A body to quote inside a fence: its lines kept, every other control or invisible
    character escaped, at most `limit` characters (None: a body already bounded by its reader,
    such as a load's budget), the cut named with how much was left out."""
    shown = _UNSAFE_IN_BLOCK.sub(_escape, text)
    if limit is None or len(shown) <= limit:
        return shown
    rest = len(shown) - limit
    return f"{shown[:limit]}\n… ({rest} more characters not shown)"


_JSON_BREAKS: Final = re.compile(rb"\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]")


def json_text(data: bytes) -> bytes:
    """Serialised JSON with the line breaks JSON leaves raw (U+0085, U+2028, U+2029 and the
    other C1 controls: valid inside a JSON string, but a line break to a terminal or to
    anything that reads the text by lines) written as `\\uXXXX` escapes. The value is the same
    to any JSON parser."""
    return _JSON_BREAKS.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), data)


def data(value: object, limit: int = LINE_LIMIT) -> object:
    """Structured data for display (a front matter, say): every string in it, keys included,
    through `line`. `export` keeps exact values; what is shown is escaped."""
    if isinstance(value, str):
        return line(value, limit)
    if isinstance(value, dict):
        return {line(k, limit) if isinstance(k, str) else k: data(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [data(v, limit) for v in value]
    return value


_PLAIN_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,40}")


def plain_name(value: object) -> str | None:
    """`value` quoted for a diagnostic when it is a short plain name (`tags`, `essay`: at most
    40 letters, digits, `_` or `-`), else None. A diagnostic about a broken file reaches the
    agent outside any fence, so it may name a key or a value only when that cannot carry a
    sentence; anything else is described by what it is ("a key"), never quoted."""
    if isinstance(value, str) and _PLAIN_NAME.fullmatch(value):
        return repr(value)
    return None
