"""The approval dialog: its message (what each candidate writes), its form (one boolean per
candidate and a scope), and what an accepted answer keeps. The flows that ask it are
engram_mcp.ops.write_ops'.

The message shows each candidate's type and body and, for an UPDATE or SUPERSEDE, a short
diff against the memory it changes (SPEC §4.3; a dialog of titles alone let an
UPDATE under a memory's old title write a `curl … | sh` body). Every quoted line sits behind a
gutter engram writes (`| `, `- | `, `+ | `), escaped by store.safety.untrusted, so a body cannot
forge a line of the message. The message is bounded (MESSAGE_LIMIT): a lone candidate has all
of it, several get an equal share each for their head lines, body and diff, and what is cut is
named. The head shows every field the file will hold (type, scope, always, tags, paths, roles,
refs and dates) and, for a change, what it drops or mutes. The form itself never carries memory
text; a candidate cut short in the message starts unticked (the attack review: a `curl … | sh`
past a 2 KB paragraph was cut from a dialog that approved it by default).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final

import orjson

from engram_mcp.ops.changes import (
    Change,
    changed_lines,
    marks,
    quoted,
    short_diff,
    summary,
    within,
    wrapped,
)
from engram_mcp.ops.shown import Shown, code_line, shown, written_fields
from store.plurals import count
from store.safety import untrusted
from store.write.notes import NoteDraft
from store.write.proposal_entry import Before, ProposalEntry


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


def dialog_title(entry: ProposalEntry, fields: Mapping[str, Any] | None = None) -> str:
    """`1. ADD use-uv [always] [paths: **] [tags: python] — Use uv…`: verdict, id, routing marks
    (`fields`: what the file will say, engram_mcp.ops.shown)."""
    verdict = entry.verdict
    fields = fields if fields is not None else written_fields(entry)
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


MESSAGE_LIMIT: Final = 20_000
"""Characters of the dialog's message, whatever the proposal (20 candidates of 20,000)."""
SHARE_LIMIT: Final = 3_600
"""Characters of one candidate's part of the message when the proposal is small."""
HEAD_LIMIT: Final = 1_200
"""Of a candidate's share, what its head lines (title, type, drop mark, title/tag changes) may
take at most: the rest is its body and diff."""
QUOTED_LINE: Final = 240
"""Characters of one quoted body line before it wraps."""


def _few(values: Sequence[str]) -> str:
    shown = ", ".join(untrusted.line(v, 60) for v in values[:8])
    return shown + (f" +{len(values) - 8} more" if len(values) > 8 else "")


def _head(entry: ProposalEntry, fields: Mapping[str, Any], change: Change | None, cut: int) -> list[str]:
    """Title, the change's `!` marks, then what the file holds besides its body (type, scope,
    always, tags; paths and roles; refs and dates), each at most `cut` characters."""
    lines = [
        dialog_title(entry, fields),
        *("   " + mark for mark in (marks(change) if change is not None else ())),
    ]
    lines.append(
        f"   type: {untrusted.line(fields['type'], 40)} · scope: {untrusted.line(fields['scope'], 40)}"
        f" · always: {'yes' if fields['always'] else 'no'} · tags: {_few(fields['tags']) or 'none'}"
    )
    if fields["paths"] or fields["roles"]:
        lines.append(f"   paths: {_few(fields['paths']) or 'none'} · roles: {_few(fields['roles']) or 'all'}")
    if (code := code_line(fields, shown=8)) is not None:
        lines.append(code)
    return [untrusted.line(line, cut) for line in lines]


def _body_lines(text: str) -> list[str]:
    lines = quoted(text.rstrip("\n")) if text.strip() else []
    return [piece.rstrip() for x in lines for piece in wrapped("   | ", x, QUOTED_LINE)]


def _size(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


CUT_LINE: Final = (
    "! cut short in this dialog, so unticked: tick it only once you have read it whole "
    "(cancel the dialog to get the full preview)"
)
"""The line under the title of a candidate whose lines the message could not hold."""


def candidate_part(
    entry: ProposalEntry, change: Change | None, share: int, fields: Mapping[str, Any] | None = None
) -> tuple[list[str], bool]:
    """One candidate's lines of the message, at most `share` characters, and whether any was
    left out (then CUT_LINE is its second line): its head (title, marks, fields: a fifth of the
    share each at most, half the share in all), what changes besides the body (up to HEAD_LIMIT
    or half the share with the head), then its body and its short diff (half each of the rest)."""
    fields = fields if fields is not None else written_fields(entry)
    part, cut = _part(entry, fields, change, share)
    if not cut:
        return part, False
    note = "   " + CUT_LINE[: max(share // 5, 0)]
    part, _ = _part(entry, fields, change, share - len(note) - 1)
    return [part[0], note, *part[1:]], True


def _part(
    entry: ProposalEntry, fields: Mapping[str, Any], change: Change | None, share: int
) -> tuple[list[str], bool]:
    head = _head(entry, fields, change, min(TITLE_LIMIT, share // 5))
    part = head[:1] + within(
        head[1:], share // 2 - _size(head[:1]), lambda i: f"   … ({len(head) - 1 - i} more)"
    )
    cut = part != head

    def add(lines: list[str], budget: int, rest: Callable[[int], str]) -> None:
        nonlocal cut
        shown = within(lines, budget, rest)
        cut = cut or shown != lines
        part.extend(shown)

    if change is not None:
        more = ["   " + line for line in summary(change)]
        add(
            more,
            min(HEAD_LIMIT, share // 2) - _size(part),
            lambda i: f"   … ({count(len(more) - i, 'more line')})",
        )
    body = ["   body:", *_body_lines(entry.body)]
    diff = ["   " + line for line in short_diff(change)] if change is not None else []
    left = share - _size(part)
    add(
        body,
        left - min(_size(diff), left // 2),
        lambda i: f"   … ({count(len(body) - i, 'more line')} of the body not shown)",
    )
    add(
        diff,
        share - _size(part),
        lambda i: f"   … ({count(changed_lines(diff[i:]), 'more changed line')} not shown)",
    )
    return part, cut


CUT_WARNING: Final = (
    "\nSome candidates are cut short below (it says where) and start unticked: tick one only once you "
    "have read it in full."
)
_WHERE: Final = {frozenset({"project"}): "this project", frozenset({"user"}): "your user memory"}


def approval(
    entries: Sequence[ProposalEntry], redactions: int, before: Mapping[int, Before] | None = None
) -> tuple[str, dict[str, Any]]:
    """The dialog: its message (`approval_message`) and its form, where a candidate the message
    cut short starts unticked."""
    return dialog(shown(entries, redactions, before))


def dialog(view: Shown) -> tuple[str, dict[str, Any]]:
    """`approval` of a proposal's shown pieces (engram_mcp.ops.shown)."""
    message, cut = _message(view)
    return message, _schema(view, cut)


def approval_message(
    entries: Sequence[ProposalEntry], redactions: int, before: Mapping[int, Before] | None = None
) -> str:
    """What the human reads above the form: each candidate's fields, body and, for an UPDATE
    or SUPERSEDE, what it changes in the memory it names (`before`: store.proposals.targets).
    At most MESSAGE_LIMIT characters: a lone candidate has them all, several an equal share
    each, SHARE_LIMIT at most."""
    return _message(shown(entries, redactions, before))[0]


def _message(view: Shown) -> tuple[str, set[int]]:
    entries, redactions, changes = view.entries, view.redactions, view.changes
    scopes = {e.scope for e in entries}
    where = _WHERE.get(frozenset(scopes), "this project and your user memory")
    header = f"engram: save {count(len(entries), 'memory candidate')} to {where}? Untick any you reject." + (
        f" ({count(redactions, 'secret')} redacted.)" if redactions else ""
    )
    room = MESSAGE_LIMIT - len(header) - len(CUT_WARNING)
    share = room - 2 if len(entries) == 1 else min(SHARE_LIMIT, room // max(len(entries), 1) - 2)
    parts = [candidate_part(e, changes.get(e.n), share, view.fields[e.n]) for e in entries]
    if any(cut for _, cut in parts):
        header += CUT_WARNING
    message = "\n\n".join([header, *("\n".join(part) for part, _ in parts)])
    return message, {e.n for e, (_, cut) in zip(entries, parts, strict=True) if cut}


NOTE_LIMIT: Final = 3_000
"""Characters of a note's dialog message (a note is at most 2,000 characters)."""


def note_message(draft: NoteDraft) -> str:
    """A note's question: its title, id, kind, scope, objective and text, quoted and bounded."""
    head = [
        f"engram: save the working note '{untrusted.line(draft.title)}' ({draft.id})?"
        + (f" ({count(draft.redactions, 'secret')} redacted.)" if draft.redactions else ""),
        f"   type: note{f' ({untrusted.line(draft.kind, 40)})' if draft.kind else ''} · scope: {draft.scope}",
    ]
    if draft.objective:
        head.append(f"   objective: {untrusted.line(draft.objective, 500)}")
    text = _body_lines(draft.text)
    return "\n".join(
        head
        + within(
            ["   text:", *text],
            NOTE_LIMIT - _size(head),
            lambda i: f"   … ({count(len(text) + 1 - i, 'more line')} not shown)",
        )
    )


def approval_schema(entries: Sequence[ProposalEntry], cut: Collection[int] = ()) -> dict[str, Any]:
    """Flat form: one boolean per candidate (verdict, id, routing marks, title; never the text),
    ticked unless the message cut it short (its number in `cut`), and a scope."""
    return _schema(shown(entries, 0), cut)


def _schema(view: Shown, cut: Collection[int]) -> dict[str, Any]:
    entries = view.entries
    properties: dict[str, Any] = {}
    for e in entries:
        properties[f"candidate_{e.n}"] = {
            "type": "boolean",
            "title": dialog_title(e, view.fields[e.n]),
            "default": e.n not in cut,
        }
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


def chosen_entries(
    entries: Sequence[ProposalEntry], content: dict[str, Any] | None, schema: Mapping[str, Any] | None = None
) -> list[ProposalEntry]:
    """The candidates an accepted form keeps (a box the answer leaves out keeps its `schema`
    default: a cut candidate is not kept unless ticked); ValueError says why an answer is
    invalid (a key not offered, a value of the wrong type, a widened scope)."""
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
    offered_boxes = (schema or {}).get("properties", {})

    def default(key: str) -> bool:
        return offered_boxes.get(key, {}).get("default", True) is True

    return [
        e
        for e in entries
        if picks.get(f"candidate_{e.n}", default(f"candidate_{e.n}")) and scope in ("all", e.scope)
    ]
