"""`engram`: the command line. Every read command has `--json` (the tool's envelope).

Exit codes: 0 ok, 1 a failure the user can fix (the message says how), 2 a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from engram_mcp import __version__, reads, writes
from engram_mcp.outcome import Outcome, failure
from engram_mcp.reads import guarded
from engram_mcp.tools.reads import LOAD_INPUT, ROUTE_INPUT, SEARCH_INPUT
from engram_mcp.tools.writes import NOTE_INPUT
from protocol.validation import compile_validator
from store import mining, notes, writer
from store.errors import StoreError
from store.store import Store
from store.workspace import find_workspace

Command = Callable[[argparse.Namespace, Store], Outcome]


def _checked(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Validate CLI arguments with the tool's own schema, so both accept exactly the same."""
    present = {k: v for k, v in arguments.items() if v is not None}
    problems = compile_validator(schema)(present)
    if problems:
        raise UsageError("; ".join(problems))
    return present


class UsageError(Exception):
    pass


def _init(args: argparse.Namespace, store: Store) -> Outcome:
    created = store.init()
    text = (
        f"engram: created {', '.join(created)} in {store.workspace}"
        if created
        else f"engram: {store.workspace}/.engram is already set up"
    )
    return Outcome(True, text, {"workspace": str(store.workspace), "created": created})


def _verify(args: argparse.Namespace, store: Store) -> Outcome:
    if args.accept:
        if store.read_only:
            raise UsageError("--accept writes the index; it is not allowed with ENGRAM_READ_ONLY")
        store.accept()
    outcome = reads.verify(store)
    if not outcome.data.get("ok", False):
        return Outcome(False, outcome.text, outcome.data, outcome.diagnostics)
    return outcome


def _search(args: argparse.Namespace, store: Store) -> Outcome:
    arguments = _checked(
        SEARCH_INPUT,
        {"query": args.query, "limit": args.limit, "types": args.type or None, "scope": args.scope},
    )
    return reads.search(store, arguments)


def _route(args: argparse.Namespace, store: Store) -> Outcome:
    return reads.route(store, _checked(ROUTE_INPUT, {"task": args.task}))


def _load(args: argparse.Namespace, store: Store) -> Outcome:
    arguments = _checked(
        LOAD_INPUT,
        {
            "query": args.query,
            "id": args.id,
            "budget_tokens": args.budget,
            "disclosure": args.disclosure,
            "full": args.full or None,
            "explain": args.explain or None,
            "objective": args.objective,
        },
    )
    return reads.load(store, arguments)


def _read_text(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text("utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{source} is not UTF-8 text") from None


def _save_session(args: argparse.Namespace, store: Store) -> Outcome:
    if args.text is None:
        raise UsageError("pass --text FILE (or - for stdin); --query-level needs host transcript mining")
    raw = mining.extract_candidates(_read_text(args.text))
    if not raw:
        return failure("ENGRAM_VALIDATION", "no explicit knowledge lines found in the text", written=False)
    entries, redactions = writer.draft(store, raw)
    if not args.force:
        return writes.token_outcome(writer.store_proposal(store, entries, redactions, "save_session"))
    adds = [e for e in entries if e["verdict"]["kind"] == "ADD"]
    rest = [dict(e, n=n) for n, e in enumerate((e for e in entries if e["verdict"]["kind"] != "ADD"), 1)]
    outcome = writes.report_outcome(writer.apply_entries(store, adds) if adds else writer.CommitReport())
    if not rest:
        return outcome
    deferred = writer.store_proposal(store, rest, redactions, "save_session")
    review = writes.token_outcome(deferred, prefix="Deferred for review (related or duplicate):\n")
    data = {**outcome.data, "review": review.data}
    return Outcome(True, outcome.text + "\n\n" + review.text, data)


def _commit(args: argparse.Namespace, store: Store) -> Outcome:
    approve: object = "all"
    if args.approve != "all":
        try:
            approve = [int(part) for part in args.approve.split(",") if part.strip()]
        except ValueError:
            raise UsageError('--approve takes "all" or numbers like 1,3') from None
    return writes.commit(store, args.token, approve)


def _note(args: argparse.Namespace, store: Store) -> Outcome:
    arguments = _checked(NOTE_INPUT, {"text": args.text, "objective": args.objective, "type": args.type})
    draft = notes.draft_note(store, arguments["text"], arguments.get("objective", ""), arguments.get("type"))
    saved = notes.save_note(store, draft)  # running the command is the human's approval
    return Outcome(
        True, f"Saved note {saved['id']} ({saved['file']}), valid until {saved['valid_until']}.", saved
    )


def _promote(args: argparse.Namespace, store: Store) -> Outcome:
    return writes.token_outcome(notes.promote(store, args.id, args.type))


def _gc(args: argparse.Namespace, store: Store) -> Outcome:
    removed = notes.gc(store)
    text = f"Removed {len(removed)} expired note(s)" + (": " + ", ".join(removed) if removed else ".")
    return Outcome(True, text, {"removed": removed})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram", description="Local, git-friendly memory for coding agents."
    )
    parser.add_argument("--version", action="version", version=f"engram {__version__}")
    parser.add_argument("--workspace", metavar="DIR", help="the workspace (default: discovered from the cwd)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, run: Command, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--json", action="store_true", help="print the JSON envelope instead of text")
        p.set_defaults(run=run)
        return p

    command("init", _init, "create .engram/ (memory/, working/, .gitignore) in the workspace")
    command("status", lambda a, s: reads.status(s), "workspace, counts, role, pending proposals, index hash")
    verify = command("verify", _verify, "check memory files against recorded hashes (exit 1 when not clean)")
    verify.add_argument("--accept", action="store_true", help="record the current files as reviewed first")
    search = command("search", _search, "BM25 search over titles, tags and bodies")
    search.add_argument("query")
    search.add_argument("--limit", type=int, help="most results (1-50, default 10)")
    search.add_argument("--type", action="append", help="only this memory type (repeatable)")
    search.add_argument("--scope", help="only this scope: project or user")
    route = command("route", _route, "classify a task and list the memories it routes to, in load order")
    route.add_argument("task")
    load = command("load", _load, "tiered memory for a task under a token budget")
    load.add_argument("query", nargs="?", help="the task; omit to load the core tier")
    load.add_argument("--id", help="load exactly this memory's body")
    load.add_argument("--budget", type=int, help="token budget (100-32000, default from config: 2000)")
    load.add_argument("--disclosure", help="tiered (default), cards or bodies")
    load.add_argument("--full", action="store_true", help="every active memory's body, up to the hard cap")
    load.add_argument("--explain", action="store_true", help="say why each memory was selected")
    load.add_argument("--objective", help="session objective (default $ENGRAM_SESSION_OBJECTIVE)")
    session = command("save-session", _save_session, "propose knowledge lines from session text")
    session.add_argument("--text", metavar="FILE", help="the session text, or - for stdin")
    session.add_argument("--force", action="store_true", help="write the ADDs now; defer the rest for review")
    commit = command("commit", _commit, "write the approved candidates of a proposal")
    commit.add_argument("token")
    commit.add_argument("--approve", default="all", help='"all" (default) or numbers like 1,3')
    note = command("note", _note, "save a working note (expires after load.working_ttl_days)")
    note.add_argument("text")
    note.add_argument("--objective", help="the session objective it belongs to")
    note.add_argument("--type", help="its durable type if promoted later")
    promote = command("promote", _promote, "propose a working note as durable memory")
    promote.add_argument("id")
    promote.add_argument("--type", help="durable type (default: the note's, else fact)")
    command("gc", _gc, "remove expired working notes")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    read_only = os.environ.get("ENGRAM_READ_ONLY", "").lower() in ("1", "true", "yes", "on")
    store = Store(find_workspace(Path.cwd(), args.workspace), read_only=read_only)
    try:
        store.recover()
        outcome = guarded(lambda: args.run(args, store))
    except UsageError as exc:
        print(f"engram {args.command}: {exc}", file=sys.stderr)
        return 2
    except StoreError as exc:  # e.g. the workspace lock is busy at start-up recovery
        outcome = failure(exc.code, exc.message, written=False)
    finally:
        store.close()
    if args.json:
        sys.stdout.write(orjson.dumps(outcome.envelope(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        stream = sys.stdout if outcome.ok else sys.stderr
        print(outcome.text, file=stream)
        for code, message in outcome.diagnostics:
            if outcome.ok:
                print(f"note: {code}: {message}", file=sys.stderr)
    return 0 if outcome.ok else 1
