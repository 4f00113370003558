"""What an UPDATE or SUPERSEDE changes in the memory it names (SPEC §4.1, §4.3): a line diff of
its title, tags, paths, refs, dates, `always` and body, and a mark when the change drops text or
tags or mutes the memory (an expiry date, refs that do not resolve, `always` turned off).

The rest, and why: docs/design.md, `engram_mcp/ops/changes.py`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from store.plurals import count
from store.safety import untrusted
from store.write.proposal_entry import Before, ProposalEntry

DIFF_LINES: Final = 600
"""Lines of each body the diff compares; the rest is named, not compared. difflib's matcher is
quadratic and worse on bodies of many alike lines: a long body would hold the preview for
seconds."""
LINE_LIMIT: Final = 240
"""Characters of one quoted line of a short diff before it wraps."""
REMOVED_LINE: Final = 2_000
"""Characters of one removed line in the preview's full diff (the new body's lines are whole)."""
_ESCAPE_GROWTH: Final = 6
"""An escape is at most six characters (`\\u2028`), so `block` with this headroom never cuts."""


def quoted(text: str) -> list[str]:
    """`text`'s lines, every control or invisible character escaped (store.safety.untrusted.block)."""
    return untrusted.block(text, _ESCAPE_GROWTH * len(text) + 1).split("\n")


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def wrapped(gutter: str, line: str, width: int = LINE_LIMIT) -> list[str]:
    """`line` behind `gutter` (`   | `, `- | `…), a long one in pieces of `width` whose gutter
    shows `↪` for `|`: nothing of a line is hidden past a cut (a `curl … | sh` at column 300)."""
    pieces = [line[i : i + width] for i in range(0, len(line), width)] or [""]
    more = gutter.replace("|", "↪")
    return [(gutter if i == 0 else more) + piece for i, piece in enumerate(pieces)]


@dataclass(frozen=True, slots=True)
class Change:
    """One UPDATE's or SUPERSEDE's difference from the memory it names."""

    kind: str
    target: str
    title: tuple[str, str] | None
    """(old, new) when the title changes."""
    tags: tuple[tuple[str, ...], tuple[str, ...]]
    """(dropped, added)."""
    paths: tuple[tuple[str, ...], tuple[str, ...]]
    refs: tuple[tuple[str, ...], tuple[str, ...]]
    values: tuple[tuple[str, str, str], ...]
    """(field, old, new) of `valid_until`, `review_after` and `always` when they change."""
    unresolved: tuple[str, ...]
    """Refs the change adds that do not resolve in the working tree (store.code.staleness)."""
    body: tuple[tuple[str, str], ...]
    """The body as a full line diff: (`-`, `+` or ` `, escaped line); a long line replaced one to
    one is preceded by its changed part (`@` the line saying where, `-~` and `+~` the parts)."""
    dropped_lines: int
    """Non-blank lines of the old body that the new one does not hold."""
    unread: int
    """Non-blank lines of the old body past DIFF_LINES, not compared."""
    tail: tuple[str, ...]
    """Lines of the new body past DIFF_LINES, not compared (escaped)."""
    changed: bool
    """The memory changed since the proposal: the commit will defer this candidate."""

    @property
    def body_changed(self) -> bool:
        return bool(self.unread or self.tail) or any(mark != " " for mark, _ in self.body)

    def value(self, name: str) -> tuple[str, str] | None:
        """(old, new) of `name` (valid_until, review_after, always) when it changes."""
        return next(((old, new) for field, old, new in self.values if field == name), None)

    def beyond(self) -> str | None:
        """The line naming what the diff did not compare, or None."""
        if not (self.unread or self.tail):
            return None
        return (
            f"… (the diff covers the first {DIFF_LINES} lines: {count(len(self.tail), 'more line')} of the "
            f"new body and {self.unread} of {self.target}'s were not compared)"
        )


def change(entry: ProposalEntry, before: Before, fields: dict[str, Any]) -> Change:
    """What `entry` (with the `fields` its file will hold) changes in `before`."""
    old_all, new_all = quoted(before.body.rstrip("\n")), quoted(entry.body.rstrip("\n"))
    old, new = old_all[:DIFF_LINES], new_all[:DIFF_LINES]
    body: list[tuple[str, str]] = []
    dropped = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if op == "equal":
            body += [(" ", line) for line in old[i1:i2]]
            continue
        if i2 - i1 == j2 - j1:  # replaced one to one: each new line beside the one it replaces
            for k in range(i2 - i1):
                body += _excerpt(j1 + k + 1, old[i1 + k], new[j1 + k])
                body += [("-", old[i1 + k]), ("+", new[j1 + k])]
        else:
            body += [("-", line) for line in old[i1:i2]]
            body += [("+", line) for line in new[j1:j2]]
        dropped += sum(1 for line in old[i1:i2] if line.strip())
    old_rest, new_rest = old_all[DIFF_LINES:], new_all[DIFF_LINES:]
    if old_rest == new_rest:  # the same past the compared lines: context, not a change
        body += [(" ", line) for line in new_rest]
        old_rest = new_rest = []
    title = (before.title, str(fields["title"])) if before.title != fields["title"] else None
    refs = [str(r) for r in fields.get("refs") or ()]
    values = (
        ("valid_until", before.valid_until[:10], str(fields.get("valid_until") or "")[:10]),
        ("review_after", before.review_after[:10], str(fields.get("review_after") or "")[:10]),
        ("always", "yes" if before.always else "no", "yes" if fields.get("always") is True else "no"),
    )
    return Change(
        kind=entry.verdict.kind,
        target=before.id,
        title=title,
        tags=_sets(before.tags, fields["tags"]),
        paths=_sets(before.paths, fields["paths"]),
        refs=_sets(before.refs, refs),
        values=tuple(v for v in values if v[1] != v[2]),
        unresolved=tuple(r for r in before.unresolved if r in refs and r not in before.refs),
        body=tuple(body),
        dropped_lines=dropped,
        unread=sum(1 for line in old_rest if line.strip()),
        tail=tuple(new_rest),
        changed=before.changed,
    )


EXCERPT_CONTEXT: Final = 40
"""Characters of the unchanged text shown around the changed part of a long replaced line."""


def _excerpt(n: int, old: str, new: str) -> list[tuple[str, str]]:
    """Where a long line replaced by another changes, and the changed parts of both (with a
    little context), to show before the whole lines: a `curl … | sh` appended to a 2 KB
    paragraph is read before the paragraph. Nothing for lines that fit on one line."""
    if max(len(old), len(new)) <= LINE_LIMIT:
        return []
    start = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new))
    )
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    before = max(start - EXCERPT_CONTEXT, 0)

    def part(line: str) -> str:
        stop = len(line) - end
        return (
            ("…" if before else "")
            + line[before : stop + min(end, EXCERPT_CONTEXT)]
            + ("…" if end > EXCERPT_CONTEXT else "")
        )

    return [
        ("@", f"(line {n} changes from column {start + 1:,}; the whole lines follow)"),
        ("-~", part(old)),
        ("+~", part(new)),
    ]


def _sets(old: Sequence[str], new: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tuple(v for v in old if v not in new), tuple(v for v in new if v not in old)


def _listed(values: Sequence[str]) -> str:
    shown = [untrusted.line(v, 60) for v in values[:8]]
    more = f" and {len(values) - 8} more" if len(values) > 8 else ""
    return ", ".join(shown) + more


def marks(c: Change) -> list[str]:
    """The `!` lines of a change: what it drops (`drop_mark`) and what mutes or retires the
    memory (an expiry date, refs that do not resolve, `always` turned off)."""
    found = [mark] if (mark := drop_mark(c)) is not None else []
    update = c.kind == "UPDATE"
    if (until := c.value("valid_until")) is not None and until[1]:
        found.append(
            f"! this update makes the memory expire on {untrusted.line(until[1], 10)}"
            if update
            else f"! the new memory expires on {untrusted.line(until[1], 10)}"
        )
        found[-1] += " (every read leaves it out after that day)"
    if c.unresolved:
        one = len(c.unresolved) == 1
        refs = f"the ref{'' if one else 's'} {_listed(c.unresolved)}, which {'does' if one else 'do'} not resolve"
        found.append(
            f"! {'this update adds' if update else 'the new memory cites'} {refs} (the memory will be marked stale)"
        )
    if c.value("always") == ("yes", "no"):
        found.append(
            "! this update stops the memory loading in every session (always: yes → no)"
            if update
            else f"! the new memory does not load in every session, as {c.target} did (always: no)"
        )
    return found


def drop_mark(c: Change) -> str | None:
    """`! this update drops 1 line of the body and the tags web, vitest`, or None."""
    parts = []
    if c.dropped_lines:
        parts.append(f"{count(c.dropped_lines, 'line')} of the body")
    if c.unread:
        parts.append(f"maybe {count(c.unread, 'more line')} of the body, not compared")
    for name, (gone, _) in (("tags", c.tags), ("paths", c.paths)):
        if gone:
            parts.append(f"the {name if len(gone) > 1 else name[:-1]} {_listed(gone)}")
    if not parts:
        return None
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if c.kind == "UPDATE":
        return f"! this update drops {text}"
    return f"! {c.target} stops loading, and the new memory leaves out {text}"


def summary(c: Change) -> list[str]:
    """The lines before the body diff: what is replaced, a changed-meanwhile warning, then
    title, tags, paths, refs, valid_until, review_after and always (unchanged ones not listed)."""
    lines = [
        f"rewrites {c.target} (its id, type, roles and history stay)"
        if c.kind == "UPDATE"
        else f"supersedes {c.target} (kept on disk, marked superseded)"
    ]
    if c.changed:
        lines.append(f"! {c.target} changed since this was proposed: the commit will defer this candidate")
    if c.title is not None:
        lines += [f"title - | {untrusted.line(c.title[0])}", f"      + | {untrusted.line(c.title[1])}"]
    for name, (gone, added) in (("tags", c.tags), ("paths", c.paths), ("refs", c.refs)):
        if gone or added:
            sides = [f"- {_listed(gone)}"] if gone else []
            sides += [f"+ {_listed(added)}"] if added else []
            lines.append(f"{name}: {' · '.join(sides)}")
    for name, old, new in c.values:
        lines.append(f"{name}: {untrusted.line(old or 'none', 40)} → {untrusted.line(new or 'none', 40)}")
    if not c.body_changed:
        lines.append("body: unchanged")
    return lines


def full_diff(c: Change) -> Iterator[str]:
    """Every line of both bodies, marked (the preview's form: the new body is all there)."""
    if not c.body_changed:
        return
    yield f"body, against {c.target}'s (- removed, + added):"
    for mark, line in c.body:  # the new body's lines whole, as the preview of an ADD shows them
        if mark in (" ", "-", "+"):  # the changed parts are the dialog's (short_diff)
            yield f"{mark} | {_cut(line, REMOVED_LINE) if mark == '-' else line}".rstrip()
    if (beyond := c.beyond()) is not None:
        yield beyond
    if c.tail:
        yield "the rest of the new body (? | : not compared):"
        yield from (f"? | {line}".rstrip() for line in c.tail)


def short_diff(c: Change, context: int = 1) -> list[str]:
    """The changed lines of the body with `context` lines around them (the dialog's form;
    bound it with `within`)."""
    if not c.body_changed:
        return []
    marks = [mark for mark, _ in c.body]
    keep = [any(m != " " for m in marks[max(i - context, 0) : i + context + 1]) for i in range(len(marks))]
    out = [f"what changes in {c.target}'s body (- removed, + added):"]
    for i, (mark, line) in enumerate(c.body):
        if mark == "@":  # engram's own line: where a long replaced line changes
            out.append(line)
        elif keep[i]:
            out += [x.rstrip() for x in wrapped(f"{mark} | " if len(mark) == 1 else f"{mark}| ", line)]
        elif keep[i - 1] if i else True:
            out.append("  | …")
    if (beyond := c.beyond()) is not None:
        out.append(beyond)
    return out


def changed_lines(lines: Sequence[str]) -> int:
    """How many of the diff `lines` (as `short_diff` writes them, any indent) remove or add."""
    return sum(1 for line in lines if line.lstrip().startswith(("- |", "+ |")))


NAMED: Final = 90
"""Room kept in a bound for the line that names what was cut."""


def within(lines: Sequence[str], budget: int, rest: Callable[[int], str]) -> list[str]:
    """`lines` if they fit in `budget` characters (a newline each); else as many as fit with
    room for `rest(i)`, the line naming what is left from index `i` (cut to NAMED, or to the
    budget when less is left). Never more than `budget` characters."""
    if sum(len(line) + 1 for line in lines) <= budget:
        return list(lines)
    out: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        if used + len(line) + 1 > budget - NAMED:
            room = min(NAMED, budget - used) - 1
            return out + [rest(i)[:room]] if room > 0 else out
        out.append(line)
        used += len(line) + 1
    return out
