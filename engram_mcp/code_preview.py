"""The preview of issue 13's candidate fields: refs, valid_until, review_after (SPEC §4.1).

Shown only when a candidate has them. References found in the text are proposed with the
candidate; the human keeps them by approving, or drops or changes them by asking the agent
to propose again with `refs` (an empty list keeps none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from engram_mcp.schemas import text

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


def line(fields: Mapping[str, Any]) -> str | None:
    """`   refs: a, b · valid until … · review after …`, or None."""
    parts = []
    if fields.get("refs"):
        parts.append("refs: " + ", ".join(fields["refs"]))
    if fields.get("valid_until"):
        parts.append(f"valid until {fields['valid_until']}")
    if fields.get("review_after"):
        parts.append(f"review after {fields['review_after']}")
    return "   " + " · ".join(parts) if parts else None
