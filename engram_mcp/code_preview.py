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
        "items": text(None, 300, 1),
        "maxItems": 20,
        "description": "Code it cites, checked on reads: workspace-relative path, path#symbol or glob. Omit: found in the text; []: none",
    },
    "valid_until": _DATE | {"description": "YYYY-MM-DD: left out of reads after it"},
    "review_after": _DATE | {"description": "YYYY-MM-DD: flagged for review from it"},
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
