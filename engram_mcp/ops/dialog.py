"""The approval dialog's form: one boolean per candidate and a scope, and what an accepted
answer keeps. The flows that ask it are engram_mcp.ops.write_ops'."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

import orjson

from engram_mcp.ops.previews import written_fields
from store.entries import ProposalEntry


def shown_key(name: str, shown: Any) -> str:
    """A question key that changes when what the human is shown changes: a 2026-07-28 retry
    whose re-computed preview differs (the store changed meanwhile) is asked again instead of
    applying an answer given to another preview."""
    digest = hashlib.sha256(orjson.dumps(shown, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]
    return f"{name}-{digest}"


TITLE_LIMIT: Final = 300
"""A dialog title's length; the routing marks come before the memory title, so a cut only
shortens the title."""


def _mark(name: str, values: Sequence[str]) -> str:
    if not values:
        return ""
    shown = [v if len(v) <= 24 else v[:23] + "…" for v in values[:3]]
    more = f" +{len(values) - 3} more" if len(values) > 3 else ""
    return f" [{name}: {', '.join(shown)}{more}]"


def dialog_title(entry: ProposalEntry) -> str:
    """`1. ADD use-uv [always] [paths: **] [tags: python] — Use uv…`: verdict, id, routing marks."""
    verdict = entry.verdict
    fields = written_fields(entry)
    line = verdict.line()
    head = f"{entry.n}. {line}" + ("" if line.endswith(f" {verdict.id}") else f" {verdict.id}")
    if fields["scope"] != "project":
        head += f" [{fields['scope']} scope]"
    if verdict.shadows:
        head += f" [shadows {verdict.shadows}]"
    if fields["always"]:
        head += " [always]"
    head += _mark("paths", fields["paths"]) + _mark("roles", fields["roles"]) + _mark("tags", fields["tags"])
    return f"{head} — {fields['title']}"[:TITLE_LIMIT]


def approval_schema(entries: Sequence[ProposalEntry]) -> dict[str, Any]:
    """Flat form: one boolean per candidate (verdict, id, routing marks, title; never the text)
    and a scope."""
    properties: dict[str, Any] = {}
    for e in entries:
        properties[f"candidate_{e.n}"] = {"type": "boolean", "title": dialog_title(e), "default": True}
    scopes = sorted({e.scope for e in entries})
    properties["scope"] = {
        "type": "string",
        "title": "Save scope",
        "enum": ["all", *scopes],
        "default": "all",
    }
    return {"type": "object", "properties": properties}


def _shown(value: Any) -> str:
    """A client's value for a message, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def chosen_entries(entries: Sequence[ProposalEntry], content: dict[str, Any] | None) -> list[ProposalEntry]:
    """The candidates an accepted form keeps; ValueError says why an answer is invalid (a key
    not offered, a value of the wrong type, a widened scope)."""
    content = content or {}
    offered = {f"candidate_{e.n}" for e in entries} | {"scope"}
    unknown = sorted(set(content) - offered)
    if unknown:
        names = ", ".join(_shown(k)[1:-1] for k in unknown[:3]) + (" and more" if len(unknown) > 3 else "")
        raise ValueError(f"the answer names {names}, which were not offered")
    scopes = sorted({e.scope for e in entries})
    scope = content.get("scope", "all")
    if not isinstance(scope, str):
        raise ValueError(f"scope must be one of {', '.join(['all', *scopes])}, not {_shown(scope)}")
    if scope != "all" and scope not in scopes:
        raise ValueError(f"the answer widens the scope to {_shown(scope)}")
    picks = {k: v for k, v in content.items() if k != "scope"}
    for key, value in sorted(picks.items()):
        if not isinstance(value, bool):
            raise ValueError(f"{key} must be true or false, not {_shown(value)}")
    return [e for e in entries if picks.get(f"candidate_{e.n}", True) and scope in ("all", e.scope)]
