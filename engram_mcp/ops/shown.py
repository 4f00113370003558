"""A proposal as the human is shown it, computed once per step from the values the store
returned (its entries, redactions and `Before`s): what each file will say, what each UPDATE
or SUPERSEDE changes, and the code fields' line. The preview (engram_mcp.ops.previews) and
the dialog (engram_mcp.ops.dialog) both render this one value, so neither asks the other, or
the store, for a piece of it.

Code fields (refs, valid_until, review_after; SPEC §4.1) are shown only when a
candidate has them. References found in the text are proposed with the candidate; the human
keeps them by approving, or drops or changes them by asking the agent to propose again with
`refs` (an empty list keeps none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from engram_mcp.ops.changes import Change, change
from store.safety import untrusted
from store.write.proposal_entry import Before, ProposalEntry

CODE_FIELDS: Final = ("refs", "valid_until", "review_after")


@dataclass(frozen=True, slots=True)
class Shown:
    """One proposal's shown pieces, by candidate number."""

    entries: tuple[ProposalEntry, ...]
    redactions: int
    fields: Mapping[int, Mapping[str, Any]]
    """What each candidate's file will say (`written_fields`)."""
    changes: Mapping[int, Change]
    """What each UPDATE and SUPERSEDE changes in the memory it names (engram_mcp.ops.changes)."""


def shown(
    entries: Sequence[ProposalEntry], redactions: int, before: Mapping[int, Before] | None = None
) -> Shown:
    """The shown pieces of `entries`, diffed against `before` (store.proposals.targets)."""
    fields = {e.n: written_fields(e) for e in entries}
    changes = {
        e.n: change(e, before[e.n], fields[e.n])
        for e in entries
        if before and e.n in before and e.verdict.kind in ("UPDATE", "SUPERSEDE")
    }
    return Shown(tuple(entries), redactions, fields, changes)


def written_fields(entry: ProposalEntry) -> dict[str, Any]:
    """What the candidate's file will say (type, title, scope, tags, paths, always, roles):
    the fields the commit re-checks against the ones shown. A NOOP writes nothing; its own
    fields are shown."""
    if entry.fields:
        return dict(entry.fields)
    return {
        "type": entry.type,
        "title": entry.title,
        "scope": entry.scope,
        "tags": list(entry.tags),
        "paths": list(entry.paths),
        "always": False,
        "roles": [],
    }


def code_row(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The preview row's code-field keys (only those the file will hold)."""
    return {k: fields[k] for k in CODE_FIELDS if fields.get(k)}


def code_line(fields: Mapping[str, Any], shown: int | None = None) -> str | None:
    """`   refs: a, b · valid until … · review after …`, or None; each value escaped
    (store.safety.untrusted), and only the first `shown` refs named when given (the rest counted)."""
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
