"""CLI commands: `stale [--expired]`, `history ID`, `import SOURCE [PATH]`, `export --json`.

`register(command, sub)` adds them to the parser of engram_mcp.cli; each returns an Outcome
like every other command (its `--json` prints the envelope), except `export`, whose output
is JSON lines.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import orjson

from engram_mcp.intake import importers
from engram_mcp.ops.outcome import Outcome, failure
from engram_mcp.ops.previews import token_outcome
from engram_mcp.ops.reports import stale_report
from engram_mcp.ops.wording import cli_wording
from store.code import staleness
from store.code.history import history
from store.code.staleness import Mark, describe
from store.plurals import count
from store.propose import followed_refs
from store.safety import untrusted
from store.store import Store
from store.write import proposals

Command = Callable[[argparse.Namespace, Store], Outcome]


def _stale(args: argparse.Namespace, store: Store) -> Outcome:
    report = stale_report(store)
    if args.expired:
        lines = [f"{count(len(report['expired']), 'expired memory')} (kept on disk, left out of reads):"]
        lines += [
            f"- {r['id']}: {r['title']} (valid until {r['valid_until'][:10]}; {r['file']})"
            for r in report["expired"]
        ]
        return Outcome(True, "\n".join(lines), {"expired": report["expired"]})
    if args.propose:
        return _propose_moves(store)
    lines = [f"{count(len(report['stale']), 'stale memory')}, {len(report['review'])} to review:"]
    for row in [*report["stale"], *report["review"]]:
        lines.append(f"- {row['id']}: {row['title']} — {describe_rows(row['marks'])}")
    if any(staleness.FOLLOWABLE in m["reason"] for r in report["review"] for m in r["marks"]):
        lines.append(
            "Files git saw renamed: `engram stale --propose` proposes each ref's new path for you to approve."
        )
    if report["stale"]:
        lines.append(
            "Fix a stale memory with `engram edit ID` (its refs or its text), or restore the code it cites."
        )
    return Outcome(True, "\n".join(lines), {"stale": report["stale"], "review": report["review"]})


def _propose_moves(store: Store) -> Outcome:
    """A proposal updating every memory whose cited file git saw renamed to its new path."""
    found = followed_refs.candidates(store.view().durable.values(), staleness.checker(store.workspace))
    if not found:
        return Outcome(
            True, "No ref to follow: git recorded no rename of a file a memory cites.", {"candidates": []}
        )
    entries, redactions = proposals.draft(store, found)
    preview = proposals.store_proposal(store, entries, redactions, "stale")
    head = f"Refs to follow git's renames: {count(len(entries), 'candidate')}. Nothing is written until you commit.\n"
    return token_outcome(preview, prefix=head, hint=cli_wording)


def describe_rows(rows: list[dict[str, str]]) -> str:
    return describe([Mark(r["kind"], r["reason"]) for r in rows])


def health_line(store: Store) -> tuple[str, dict[str, int]]:
    """`memory: N stale, M to review, K expired` for `engram doctor`."""
    report = stale_report(store)
    counts = {k: len(v) for k, v in report.items()}
    line = f"memory: {counts['stale']} stale, {counts['review']} to review, {counts['expired']} expired"
    return line + (" (see `engram stale`)" if any(counts.values()) else ""), counts


def _history(args: argparse.Namespace, store: Store) -> Outcome:
    view = store.view()
    scope = "user" if args.id.startswith("user:") else "project"
    found = history(view.snapshots, store.workspace, args.id.removeprefix("user:"), scope)
    lines = [f"History of {found.id} (oldest first):"]
    rows = []
    for memory in found.chain:
        meta = memory.meta
        row = {
            "id": memory.id,
            "title": memory.title,
            "status": memory.status,
            "created": str(meta.get("created", "")),
            "updated": str(meta.get("updated", "")),
            "supersedes": meta.get("supersedes") or [],
            "superseded_by": meta.get("superseded_by"),
        }
        rows.append(row)
        here = " ←" if memory.id == found.id else ""
        lines.append(
            f"- {memory.id} [{memory.status}] {memory.title} (updated {row['updated'] or '?'}){here}"
        )
    data: dict[str, Any] = {"id": found.id, "chain": rows}
    if found.commits is None:
        lines.append("git: not a git repository here (no file history)")
        data["commits"] = None
    else:
        lines.append(f"git log of its file ({count(len(found.commits), 'commit')}):")
        lines += [f"  {c.hash} {c.date} {c.author}: {c.subject}" for c in found.commits]
        data["commits"] = [
            {"hash": c.hash, "date": c.date, "author": c.author, "subject": c.subject} for c in found.commits
        ]
    return Outcome(True, "\n".join(lines), data)


def export_lines(store: Store) -> list[bytes]:
    """Every memory file of both scopes, superseded, expired and working notes included."""
    view = store.view()
    lines = []
    for memory in sorted(
        (m for s in view.snapshots for m in s.memories), key=lambda m: (m.scope, m.tier, m.id)
    ):
        record = {
            "id": memory.id,
            "scope": memory.scope,
            "tier": memory.tier,
            "hash": memory.hash,
            "front_matter": memory.meta,
            "body": memory.body,
        }
        lines.append(
            untrusted.json_text(orjson.dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS))
        )
    return lines


def _export(args: argparse.Namespace, store: Store) -> Outcome:
    lines = export_lines(store)
    return Outcome(True, b"\n".join(lines).decode(), {"count": len(lines)})


def _import(args: argparse.Namespace, store: Store) -> Outcome:
    found = importers.read(args.source, store.workspace, args.path)
    if not found.candidates:
        return failure(
            "ENGRAM_VALIDATION",
            f"nothing to import from {untrusted.line(found.where, 300)}: it holds no instruction "
            "(a list item or paragraph) to propose" + (f" ({found.note})" if found.note else ""),
            written=False,
        )
    entries, redactions = proposals.draft(store, found.candidates)
    preview = proposals.store_proposal(store, entries, redactions, f"import:{args.source}")
    head = f"Imported from {found.where}: {count(len(entries), 'candidate')}. Nothing is written until you commit.\n"
    if found.note:
        head += found.note + "\n"
    return token_outcome(preview, prefix=head, hint=cli_wording)  # the command to commit it, not the tool


def register(command: Callable[..., argparse.ArgumentParser], sub: Any) -> None:
    """Add the commands to engram's parser (`command` adds `--json`; `sub` is the subparsers)."""
    stale = command("stale", _stale, "memories whose code references broke, or are due for review")
    stale.add_argument("--expired", action="store_true", help="list memories past their valid_until instead")
    stale.add_argument(
        "--propose",
        action="store_true",
        help="propose the new path of each cited file git saw renamed (you approve it; nothing is written before)",
    )
    hist = command("history", _history, "a memory's supersede chain and its file's git log")
    hist.add_argument("id")
    imp = command(
        "import", _import, "propose knowledge from another host's files (writes nothing)", writing=True
    )
    imp.add_argument("source", choices=importers.SOURCES)
    imp.add_argument("path", nargs="?", help="the file or folder (default: where the host keeps it)")
    export = sub.add_parser(
        "export", help="every memory as JSON lines", description="every memory as JSON lines"
    )
    export.add_argument("--json", dest="jsonl", action="store_true", help="JSON lines (the only format)")
    export.set_defaults(run=_export, json=False, writing=False)
