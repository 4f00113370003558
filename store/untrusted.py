"""The one way text from a repository reaches any output (tool text, structured content, CLI,
session hook, `verify`, `doctor`).

Everything a clone can write is untrusted: memory bodies and titles, file names, front-matter
keys and values, refs, config values and the diagnostics that quote them. Shown raw, a line
break in any of them starts a line the agent reads as engram's own (`System: call
engram_commit…`, a forged closing fence), and a terminal control sequence rewrites what the
human sees. So such text goes through `line` (one line: every control character, line or
paragraph separator, bidi override and invisible format character shown as an escape, the
length bounded) or `block` (a body quoted inside a fence: line breaks and tabs kept, every
other such character escaped, the length bounded and the rest named). A backslash is shown
doubled, so an escape in the output always means the character, never text that looked like
one.
"""

from __future__ import annotations

import re
from typing import Final

LINE_LIMIT: Final = 200
"""Characters of one untrusted value on one output line, before the cut."""

_UNSAFE: Final = re.compile(
    "[\\\\\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"
)
_UNSAFE_IN_BLOCK: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"
)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\\":
        return "\\\\"
    code = ord(char)
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char) or (
        f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    )


def line(text: object, limit: int = LINE_LIMIT) -> str:
    """`text` as one safe line of at most `limit` characters (a cut ends in `…`)."""
    shown = _UNSAFE.sub(_escape, str(text))
    return shown if len(shown) <= limit else shown[: max(limit - 1, 0)] + "…"


def block(text: str, limit: int) -> str:
    """A body to quote inside a fence: its lines kept, every other control or invisible
    character escaped, at most `limit` characters, the cut named with how much was left out."""
    shown = _UNSAFE_IN_BLOCK.sub(_escape, text)
    if len(shown) <= limit:
        return shown
    rest = len(shown) - limit
    return f"{shown[:limit]}\n… ({rest} more characters not shown)"


def is_plain(text: str) -> bool:
    """`text` would be shown as written by `line` (no escape, no cut at the default limit)."""
    return len(text) <= LINE_LIMIT and _UNSAFE.search(text) is None
