"""The one-line-per-key front matter engram writes (and most people do), read without YAML.

`key: scalar` and `key: [scalar, scalar]` lines, nothing else, each scalar plain or simply
quoted, typed as YAML 1.1 types a plain scalar (PyYAML's implicit resolvers, less timestamps:
dates stay strings). Anything outside this form (escapes, block lists, comments, a repeated
key, a number that is not a plain integer…) returns None and goes to the strict YAML loader
(store.files.front_yaml), so the result is always what YAML gives; a test compares the two on
generated blocks. A fresh 10,000-memory store spent a third of its index build constructing
these from YAML nodes, and a store whose files are all in this form never imports YAML.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import repeat
from typing import Any, Final

_LINE: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]{0,99}): (\S(?:.*\S)?)")  # YAML keys end by 1,024
_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`<=")
_FLOW_FORBIDDEN: Final = frozenset(",[]{}?")  # the pure-Python scanner ends a flow scalar at `?` too

# PyYAML's implicit resolvers (yaml/resolver.py), matched in full: the typing a plain scalar gets
_BOOL: Final = re.compile(r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF")
_TRUE: Final = frozenset(("yes", "true", "on"))
_NULL: Final = re.compile(r"~|null|Null|NULL")
_FLOAT: Final = re.compile(
    r"""[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN)""",
    re.X,
)
_INT: Final = re.compile(
    r"""[-+]?0b[0-1_]+
    |[-+]?0[0-7_]+
    |[-+]?(?:0|[1-9][0-9_]*)
    |[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+""",
    re.X,
)
_PLAIN_INT: Final = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
"""The integers read here; YAML's other forms (`0x1F`, `0o7`, `1_0`, `1:30`) go to YAML."""

_NOT_SIMPLE: Final = object()
"""What `_scalar` answers for a scalar this form leaves to YAML."""


def simple(block: str) -> dict[str, Any] | None:
    """The block read as the one-line-per-key form, or None when it is not in that form."""
    meta: dict[str, Any] = {}
    lines = block.split("\n")
    if block.endswith("\n"):
        lines.pop()
    for found in map(_line, lines):
        if found is None:
            return None
        key, value, many = found
        if key in meta:
            return None
        meta[key] = list(value) if many else value  # a list of its own: callers may change it
    return meta


@lru_cache(maxsize=4096)  # `type: fact`, `status: active`, `always: false`, tags, dates recur
def _line(line: str) -> tuple[str, Any, bool] | None:
    """One line's (key, value, whether the value is a list, kept as a tuple here), or None when
    the line is outside the form."""
    match = _LINE.fullmatch(line)
    if match is None:
        return None
    key, value = match.groups()
    if _scalar(key, False) != key:
        return None
    if value[0] == "[" and value[-1] == "]":
        inner = value[1:-1]
        items = tuple(map(_scalar, inner.split(", "), repeat(True))) if inner else ()
        if any(item is _NOT_SIMPLE for item in items):
            return None
        return key, items, True
    scalar = _scalar(value, False)
    return None if scalar is _NOT_SIMPLE else (key, scalar, False)


@lru_cache(maxsize=4096)  # types, statuses, tags and dates recur from file to file
def _scalar(text: str, flow: bool) -> Any:
    """A plain or quoted scalar's value as YAML types it; _NOT_SIMPLE for anything this form
    leaves to YAML (a quoted scalar holding its own quote or a backslash, for one)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        inner = text[1:-1]
        if text[0] in inner or "\\" in inner or not inner.isprintable():
            return _NOT_SIMPLE
        return inner
    if (
        not text
        or text[0] in _INDICATORS
        or text[0].isspace()
        or text[-1].isspace()
        or text[-1] == ":"
        or ": " in text
        or " #" in text
        or not text.isprintable()
        or (flow and not _FLOW_FORBIDDEN.isdisjoint(text))
    ):
        return _NOT_SIMPLE
    if _BOOL.fullmatch(text):
        return text.lower() in _TRUE
    if _NULL.fullmatch(text):
        return None
    if _PLAIN_INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text) or _INT.fullmatch(text):
        return _NOT_SIMPLE
    return text
