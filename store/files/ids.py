"""Memory ids and roles: `[a-z0-9][a-z0-9-]{0,63}`, matched in full. Ids are file names, so
nothing else gets near a path.

`ID_PATTERN` is published in the tools' JSON Schemas. A bare `$` would let `"probe\n"` through
in Python (`$` also matches before a final newline, and jsonschema uses `re.search`) while it
refuses it in ECMA-262; `$(?!\n)` means "end of the string" in both dialects. The store checks
with `fullmatch` anyway, before any path is built.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from store.errors import InvalidId

ID_PATTERN: Final = r"^[a-z0-9][a-z0-9-]{0,63}$(?!\n)"
_ID_RE: Final = re.compile(ID_PATTERN)
MAX_ID_LENGTH: Final = 64
ID_RULE: Final = "ids are 1-64 characters of a-z, 0-9 and '-', starting with a letter or digit"


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None


def check_id(value: object) -> str:
    """Return `value` if it is a valid id; otherwise raise InvalidId (no path is ever built)."""
    if not is_valid_id(value):
        shown = repr(value)[:80]
        raise InvalidId(f"{shown} is not a memory id: {ID_RULE}")
    assert isinstance(value, str)
    return value


def check_role(value: object) -> str:
    """Return `value` if it is a role slug (the id pattern, in full); otherwise raise InvalidId."""
    if not is_valid_id(value):
        raise InvalidId(
            f"{repr(value)[:80]} is not a role: roles are 1-64 characters of a-z, 0-9 and '-', "
            "starting with a letter or digit (default resets)"
        )
    assert isinstance(value, str)
    return value


def slugify(title: str) -> str:
    """The id a title suggests: ASCII-folded, lower-case, words joined by '-'."""
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii").lower()
    return _at_word(re.sub(r"[^a-z0-9]+", "-", folded).strip("-"), MAX_ID_LENGTH) or "memory"


def _at_word(slug: str, limit: int) -> str:
    """`slug` cut to `limit` characters at a '-' (a word boundary), unless one word is longer."""
    if len(slug) <= limit:
        return slug
    head = slug[: limit + 1]
    return head.rsplit("-", 1)[0] if "-" in head.strip("-") else slug[:limit]


def unique_id(base: str, taken: set[str]) -> str:
    """`base`, or `base-2`, `base-3`… — the first not in `taken`, always within 64 characters."""
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = _at_word(base, MAX_ID_LENGTH - len(suffix)).rstrip("-") + suffix
        if candidate not in taken:
            return candidate
        n += 1
