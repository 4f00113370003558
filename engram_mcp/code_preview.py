"""The preview of issue 13's candidate fields: refs, valid_until, review_after (SPEC §4.1).

Shown only when a candidate has them. References found in the text are proposed with the
candidate; the human keeps them by approving, or drops or changes them by asking the agent
to propose again with `refs` (an empty list keeps none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from engram_mcp.schemas import text
from store.safety import untrusted

FIELDS: Final = ("refs", "valid_until", "review_after")
_DATE: Final = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$(?!\n)", "maxLength": 10}
CANDIDATE_PROPERTIES: Final = {
    "refs": {
        "type": "array",
        "items": text(
            "Code this memory cites: a path, path#symbol or a glob, relative to the workspace", 300, 1
        ),
        "maxItems": 20,
        "description": "Code references, checked on every read (omit: found in the text; [] keeps none)",
    },
    "valid_until": _DATE | {"description": "Left out of reads after this day (YYYY-MM-DD); the file is kept"},
    "review_after": _DATE | {"description": "Flagged for review from this day (YYYY-MM-DD); still loaded"},
}


def row_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The preview row's extra keys (only those the file will hold)."""
    return {k: fields[k] for k in FIELDS if fields.get(k)}


def line(fields: Mapping[str, Any], shown: int | None = None) -> str | None:
    """`   refs: a, b · valid until … · review after …`, or None; each value escaped
    (store.untrusted), and only the first `shown` refs named when given (the rest counted)."""
    parts = []
    if refs := [str(r) for r in fields.get("refs") or ()]:
        few = refs if shown is None else refs[:shown]
        more = f" and {len(refs) - len(few)} more" if len(few) < len(refs) else ""
        parts.append("refs: " + ", ".join(untrusted.line(r, 60 if shown else 300) for r in few) + more)
    if fields.get("valid_until"):
        parts.append(f"valid until {untrusted.line(fields['valid_until'], 10)}")
    if fields.get("review_after"):
        parts.append(f"review after {untrusted.line(fields['review_after'], 10)}")
    return "   " + " · ".join(parts) if parts else None
