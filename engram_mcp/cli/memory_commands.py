"""The commands for people (SPEC §7): add, list, show, edit, forget, restore, pending.

The CLI is the human's terminal: running one of these is their approval. Each still takes the
path a tool would: `add` is `engram_save`'s draft (redaction, validation, verdicts) and then the
commit path; forget, restore, edit and `pending --cancel` go through the store's journaled write
path and are sealed, so `engram verify` stays clean (store/write/curate.py). Each prints the tools'
envelope with `--json`; a question (add, forget --delete) is asked on a terminal only, and
`--yes` answers it. `pending` on a terminal asks about each waiting candidate
(engram_mcp.cli.review_walk); off one, or with `--json`, it lists them.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from engram_mcp.cli import review_walk
from engram_mcp.cli.common import checked, confirm, memory_id_arg
from engram_mcp.errors import Fixable, UsageError
from engram_mcp.mcp.schemas import MEMORY_TYPES, SCOPES
from engram_mcp.mcp.tools.write_tools import CANDIDATE
from engram_mcp.ops import agent_shell
from engram_mcp.ops.outcome import Outcome, failure
from engram_mcp.ops.previews import preview_rows, preview_text, report_outcome
from engram_mcp.ops.wording import cli_wording
from store.code.validity import is_date
from store.errors import StoreError
from store.files.memory import DURABLE_TYPES, STATUSES
from store.plurals import count
from store.read.snapshot import Broken
from store.safety import untrusted
from store.safety.invisible import describe, first_invisible
from store.safety.redact import redact, redaction_kinds
from store.store import Store
from store.write import commits, curate, kept_edits, proposals, transaction

Command = Callable[[argparse.Namespace, Store], Outcome]
Register = Callable[..., argparse.ArgumentParser]

ID_COLUMN: Final = 40
"""Characters `list` pads its id column to at most (ids are up to 64: a longer one overruns)."""
TYPE_COLUMN: Final = 12
"""`[preference]`, the longest type in its brackets."""
PROBLEM_LIMIT: Final = 400
"""Characters of a `list` line's problem (its file and the parser's words, escaped)."""
SHOW_LIMIT: Final = 200_000
"""Characters of a file `engram show` prints. It prints the file as written, like `cat`, but
with control characters other than line breaks and tabs escaped (store.safety.untrusted.block), and
its `--json` front matter escaped value by value; `export --json` gives exact values."""
_ADD_FLAGS: Final = {
    "type": "TYPE",
    "title": "TITLE",
    "body": "BODY",
    "scope": "--scope",
    "tags": "--tag",
    "paths": "--path",
    "id": "--id",
    "supersedes": "--supersedes",
    "refs": "--ref",
    "valid_until": "--valid-until",
    "review_after": "--review-after",
}


def _editor() -> list[str]:
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not command:
        raise Fixable("ENGRAM_NO_EDITOR", "no editor: set $EDITOR (or $VISUAL), e.g. EDITOR=nano")
    return shlex.split(command)


def _edit_file(path: Path) -> bytes:
    """Open `path` in the human's editor and return what they saved."""
    done = subprocess.run([*_editor(), str(path)], check=False)
    if done.returncode != 0:
        raise Fixable(
            "ENGRAM_EDITOR", f"the editor exited with status {done.returncode}; nothing was written"
        )
    return path.read_bytes()


def _body(source: str | None) -> str:
    if source == "-":
        return sys.stdin.read()
    if source is not None:
        return source
    with tempfile.TemporaryDirectory(prefix="engram-add-") as folder:
        path = Path(folder) / "body.md"
        path.write_bytes(b"")
        text = _edit_file(path).decode("utf-8", "replace")
    if not text.strip():
        raise Fixable("ENGRAM_VALIDATION", "the body is empty; nothing was saved")
    return text


def _date_arg(flag: str, value: str | None) -> str | None:
    if value is not None and not is_date(value):
        raise UsageError(f"{flag} {value[:40]!r} is not a date: write it YYYY-MM-DD, e.g. 2027-03-31")
    return value


def _add(args: argparse.Namespace, store: Store) -> Outcome:
    candidate = checked(
        CANDIDATE,
        {
            "type": args.type,
            "title": args.title,
            "body": _body(args.body),
            "scope": args.scope,
            "tags": list(dict.fromkeys(args.tag)) or None,
            "paths": args.path or None,
            "always": True if args.always else None,
            "id": memory_id_arg("--id", args.id),
            "supersedes": memory_id_arg("--supersedes", args.supersedes),
            "refs": args.ref,
            "valid_until": _date_arg("--valid-until", args.valid_until),
            "review_after": _date_arg("--review-after", args.review_after),
        },
        _ADD_FLAGS,
    )
    transaction.check_workspace(store)
    entries, redactions = proposals.draft(store, [candidate])
    rows = preview_rows(entries)
    if not args.yes and sys.stdin.isatty():
        print(preview_text(entries, redactions, proposals.drafted(entries)), file=sys.stderr)
    if not confirm("Save this memory?", yes=args.yes, action="save it"):
        data = {"candidates": rows, "redactions": redactions, "written": [], "deferred": []}
        return Outcome(True, "Nothing was saved.", data)
    outcome = report_outcome(commits.apply_entries(store, entries), words=cli_wording)
    outcome.data.update(candidates=rows, redactions=redactions)
    said = _redacted(candidate)
    if not said:
        return outcome
    outcome.data["redacted"] = said
    return replace(outcome, text=outcome.text + "\n" + _redacted_line(said))


_FIELDS: Final = ("title", "body", "tags", "paths")


def _redacted(candidate: dict[str, Any]) -> dict[str, list[str]]:
    """The kinds of what redaction took out of each field, for the person who gave them (issue
    22: `add --yes` redacted silently; the preview only counts)."""
    found: dict[str, list[str]] = {}
    for name in _FIELDS:
        value = candidate.get(name)
        values = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        kinds = [kind for text in values for kind in redaction_kinds(str(text))]
        if kinds:
            found[name] = kinds
    return found


def _redacted_line(found: dict[str, list[str]]) -> str:
    """`Redacted 1 secret (aws-access-token) from the body, …`: every field, every kind."""
    parts = []
    for name, kinds in found.items():
        named = ", ".join(k if n == 1 else f"{k} ×{n}" for k, n in Counter(kinds).items())
        parts.append(f"{count(len(kinds), 'secret')} ({named}) from the {name}")
    return "Redacted " + "; ".join(parts) + ", before anything was saved."


def _list(args: argparse.Namespace, store: Store) -> Outcome:
    """The memories, one aligned line each, then a `!` line per memory file engram could not
    use (never left out without a word). Exit 0 either way: a listing that could not
    read every file says so and names the files (`verify` and `doctor`, the checks, exit 1)."""
    view = store.view()
    wanted = set(STATUSES) if args.status == "all" else {args.status}
    memories = sorted(
        (
            m
            for m in view.everything()
            if m.status in wanted
            and (not args.type or m.type in args.type)
            and (not args.scope or m.scope == args.scope)
        ),
        key=lambda m: (m.tier, m.scope, m.id),
    )
    rows = [
        {
            "id": m.id,
            "type": m.type,
            "scope": m.scope,
            "tier": m.tier,
            "status": m.status,
            "title": m.title,
            "always": m.always,
            "tags": list(m.tags),
        }
        for m in memories
    ]
    broken = [_broken_row(b) for b in view.broken if not args.scope or b.scope == args.scope]
    width = min(max((len(m.id) for m in memories), default=0), ID_COLUMN)
    kinds = min(max((len(m.type) for m in memories), default=0) + 2, TYPE_COLUMN)
    lines = [
        f"{r['id']:<{width}}  {'[' + str(r['type']) + ']':<{kinds}}  {r['title']}"
        + "".join(
            f" ({x})"
            for x in (
                r["scope"] if r["scope"] != "project" else "",
                r["status"] if r["status"] != "active" else "",
                "always" if r["always"] else "",
            )
            if x
        )
        for r in rows
    ]
    lines += [f"!  {b['id']}  {b['verdict']}: {b['shown']}" for b in broken]
    unusable = ""
    if broken:
        parse = all(b["verdict"] == "does not parse" for b in broken)
        verb = ("does not parse" if len(broken) == 1 else "do not parse") if parse else "cannot be used"
        unusable = f"{count(len(broken), 'file')} {verb} (marked !: fix by hand; nothing of it is loaded)"
    if not rows:
        filtered = args.type or args.scope or args.status != "active"
        lines.append(
            "No memory matches these filters."
            if filtered and view.everything()
            else f"No memory could be read: {unusable}."
            if broken
            else "No memories yet: add one with `engram add TYPE TITLE BODY`."
        )
    else:
        lines.append(
            f"{count(len(rows), 'memory')}"
            + (f", and {unusable}" if broken else "")
            + ". `engram show ID` prints one."
        )
    data: dict[str, Any] = {
        "memories": rows,
        "broken": [{k: v for k, v in b.items() if k != "shown"} for b in broken],
    }
    diagnostics = tuple((b["code"], b["shown"]) for b in broken)
    return Outcome(True, "\n".join(lines), data, diagnostics)


def _broken_row(broken: Broken) -> dict[str, str]:
    """A file `list` marks: its id, where it is and what is wrong (escaped, bounded: a clone's
    file name, YAML error and key names)."""
    problem = broken.problem
    return {
        "id": broken.id,
        "scope": broken.scope,
        "tier": broken.tier,
        "file": problem.file,
        "code": problem.code,
        "verdict": broken.verdict,
        "problem": untrusted.line(problem.message, PROBLEM_LIMIT),
        "shown": untrusted.line(f"{problem.file}: {problem.message}", PROBLEM_LIMIT),
    }


def _show(args: argparse.Namespace, store: Store) -> Outcome:
    memory = curate.find(store, args.id)
    data, meta, body = curate.read_file(store, memory)
    file = curate.file_name(store, memory)
    text = untrusted.block(data.decode("utf-8", "replace").rstrip("\n"), SHOW_LIMIT)
    return Outcome(
        True,
        f"{file}\n{text}",
        {
            "id": memory.id,
            "scope": memory.scope,
            "tier": memory.tier,
            "file": file,
            "meta": untrusted.data(meta, SHOW_LIMIT),
            "body": untrusted.block(body, SHOW_LIMIT),
        },
    )


def _change(change: curate.Change, text: str) -> Outcome:
    data = {
        "id": change.id,
        "scope": change.scope,
        "file": change.file,
        "status": change.status,
        "changed": change.changed,
    }
    return Outcome(True, text, data)


def _forget(args: argparse.Namespace, store: Store) -> Outcome:
    memory_id = memory_id_arg("ID", args.id)
    if args.delete:
        memory = curate.find(store, memory_id)
        transaction.check_workspace(store)
        if not confirm(f"Delete {memory.id} ({memory.title}) for good?", yes=args.yes, action="delete it"):
            return Outcome(True, "Nothing was deleted.", {"id": memory.id, "changed": False})
        change = curate.delete(store, memory_id)
        return _change(change, f"Deleted {change.id} ({change.file}).")
    change = curate.set_status(store, memory_id, "retired")
    if not change.changed:
        return _change(
            change, f"{change.id} is already retired; `engram restore {change.id}` brings it back."
        )
    return _change(
        change,
        f"Retired {change.id} ({change.file}): the file is kept and reads leave it out; "
        f"`engram restore {change.id}` brings it back.",
    )


def _restore(args: argparse.Namespace, store: Store) -> Outcome:
    change = curate.set_status(store, memory_id_arg("ID", args.id), "active")
    if not change.changed:
        return _change(change, f"{change.id} is active already; nothing changed.")
    return _change(change, f"Restored {change.id} ({change.file}): reads include it again.")


def _edit(args: argparse.Namespace, store: Store) -> Outcome:
    """Edit a memory's file in $EDITOR. An edit engram refuses is kept, not lost
    (store.write.kept_edits): the message names where, and `engram edit ID` reopens it."""
    memory = curate.find(store, memory_id_arg("ID", args.id))
    original, _, _ = curate.read_file(store, memory)
    transaction.check_workspace(store)
    start = original
    kept = kept_edits.find(store, memory, original)
    if kept is not None and kept.text is not None:
        start = kept.text
        print(
            f"engram edit: reopening your kept edit of {memory.id} ({_shown_path(kept.path)})",
            file=sys.stderr,
        )
    elif kept is not None:
        print(
            f"engram edit: {memory.id} changed since your edit of it was kept in {_shown_path(kept.path)}; "
            "starting from the file as it is now (copy from the kept edit what you need)",
            file=sys.stderr,
        )
    with tempfile.TemporaryDirectory(prefix="engram-edit-") as folder:
        path = Path(folder) / f"{memory.id}.md"
        path.write_bytes(start)
        edited = _edit_file(path)
    if edited == original:
        kept_edits.drop(store, memory, original)
        return Outcome(
            True, f"{memory.id}: no change; nothing was written.", {"id": memory.id, "changed": False}
        )
    try:
        clean, redactions = _checked_edit(edited)
        change = curate.replace(store, memory.id, original, clean.encode("utf-8"))
    except (Fixable, StoreError) as exc:
        code, message = (
            (exc.code, exc.message) if isinstance(exc, Fixable) else (exc.code, exc.text(cli_wording))
        )
        where = _shown_path(kept_edits.keep(store, memory, original, edited))
        raise Fixable(
            code,
            f"{message.rstrip('. ')}. Your edit is kept in {where}: `engram edit {memory.id}` reopens it "
            "(delete that file to start again from the memory's file)",
        ) from None
    kept_edits.drop(store, memory, original)
    outcome = _change(
        change,
        f"Saved {change.id} ({change.file})"
        + (f"; {count(redactions, 'secret')} redacted" if redactions else "")
        + ".",
    )
    outcome.data["redactions"] = redactions
    return outcome


def _checked_edit(edited: bytes) -> tuple[str, int]:
    """The edited file as text, redacted (Fixable when it is not UTF-8 or hides a character)."""
    try:
        text = edited.decode("utf-8")
    except UnicodeDecodeError:
        raise Fixable("ENGRAM_VALIDATION", "the edited file is not UTF-8 text; nothing was written") from None
    bad = first_invisible(text)
    if bad is not None:
        raise Fixable(
            "ENGRAM_VALIDATION",
            f"the edited file contains the invisible character {describe(bad)}; remove it. Nothing was written",
        )
    return redact(text)


def _shown_path(path: Path) -> str:
    """A path of the user's own folder as they would type it (`~/…` under their home)."""
    home = Path.home()
    shown = f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
    return untrusted.line(shown, 1000)


def _pending(args: argparse.Namespace, store: Store) -> Outcome:
    if args.cancel is not None:
        gone = curate.cancel(store, args.cancel)
        return Outcome(
            True,
            f"Cancelled proposal {gone.n} ({gone.ref}, {count(len(gone.candidates), 'candidate')}): its token no "
            "longer works.",
            {"cancelled": _proposal(gone)},
        )
    if not args.json and not store.read_only and review_walk.on_terminal():
        shell = agent_shell.detect() if store.agent_shell else []
        if shell:  # SPEC §7: a yes from an agent's shell would be the agent approving itself
            return failure("ENGRAM_AGENT_SHELL", review_walk.refusal(shell))
        return review_walk.walk(store)  # at the human's own terminal: each candidate, y/N/q
    waiting = curate.pending(store)
    if not waiting:
        return Outcome(True, "No proposal is waiting for approval.", {"proposals": []})
    lines = []
    for p in waiting:
        lines.append(
            f"{p.n}. {p.ref} from {untrusted.line(p.origin or 'a proposal', 40)}: "
            f"{count(len(p.candidates), 'candidate')}, expires {p.expires}"
        )
        lines += [
            f"   {c['n']}. {c['verdict']} {untrusted.line(c['id'], 80)} — {untrusted.line(c['title'])}"
            for c in p.candidates
        ]
    lines.append(
        f"To approve, {review_walk.HINT}; `engram pending --cancel N` cancels one."
        if not store.read_only
        else "This engram runs read-only, so nothing is asked here; `engram pending --cancel N` "
        "cancels one where it can write."
    )
    return Outcome(True, "\n".join(lines), {"proposals": [_proposal(p) for p in waiting]})


def _proposal(p: curate.Proposal) -> dict[str, Any]:
    return {
        "n": p.n,
        "ref": p.ref,
        "origin": p.origin,
        "created": p.created,
        "expires": p.expires,
        "candidates": p.candidates,
    }


def add_commands(command: Register) -> None:
    """Register the commands for people with `cli.build_parser`'s `command` helper."""
    add = command(
        "add", _add, "save a typed memory (shows the verdict and asks y/N on a terminal)", writing=True
    )
    add.add_argument(
        "type", choices=DURABLE_TYPES, metavar="TYPE", help=f"one of: {', '.join(DURABLE_TYPES)}"
    )
    add.add_argument("title", metavar="TITLE")
    add.add_argument("body", nargs="?", metavar="BODY", help="the text; - reads stdin; omitted opens $EDITOR")
    add.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    add.add_argument(
        "--path", action="append", default=[], metavar="GLOB", help="a path glob it applies to (repeatable)"
    )
    add.add_argument("--always", action="store_true", help="load it for every task (the core tier)")
    add.add_argument("--scope", choices=SCOPES, help="project (default) or user (every workspace)")
    add.add_argument("--id", help="the id to use, or an existing id to update")
    add.add_argument("--supersedes", metavar="ID", help="the id of the memory this one replaces")
    add.add_argument(
        "--ref",
        action="append",
        metavar="REF",
        help="code it cites: a path, path#symbol or glob (repeatable; default: found in the text)",
    )
    add.add_argument("--valid-until", metavar="YYYY-MM-DD", help="left out of reads after this date")
    add.add_argument("--review-after", metavar="YYYY-MM-DD", help="flagged for review after this date")
    add.add_argument("-y", "--yes", action="store_true", help="save without asking")
    listing = command("list", _list, "list memories (active ones unless --status says otherwise)")
    listing.add_argument("--type", action="append", choices=MEMORY_TYPES, help="only this type (repeatable)")
    listing.add_argument("--scope", choices=SCOPES, help="only this scope")
    listing.add_argument("--status", choices=[*STATUSES, "all"], default="active", help="default: active")
    show = command("show", _show, "print a memory's file: front matter and body")
    show.add_argument("id", metavar="ID")
    edit = command(
        "edit", _edit, "edit a memory in $EDITOR; the result is validated before it is written", writing=True
    )
    edit.add_argument("id", metavar="ID")
    forget = command(
        "forget", _forget, "retire a memory (kept, left out of reads), or --delete its file", writing=True
    )
    forget.add_argument("id", metavar="ID")
    forget.add_argument("--delete", action="store_true", help="remove the file (asks first; --yes skips)")
    forget.add_argument("-y", "--yes", action="store_true", help="delete without asking")
    restore = command("restore", _restore, "bring a retired memory back", writing=True)
    restore.add_argument("id", metavar="ID")
    pending = command(
        "pending",
        _pending,
        "review waiting proposals one candidate at a time (y/N/q on a terminal; else list them)",
        writing=True,
    )
    pending.add_argument(
        "--cancel", metavar="N|TOKEN", help="cancel one (its number in the list, or its token)"
    )
