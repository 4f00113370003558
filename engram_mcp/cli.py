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

from engram_mcp import __version__, reads
from engram_mcp.outcome import Outcome
from engram_mcp.reads import guarded
from engram_mcp.tools.reads import LOAD_INPUT, ROUTE_INPUT, SEARCH_INPUT
from protocol.validation import compile_validator
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    read_only = os.environ.get("ENGRAM_READ_ONLY", "").lower() in ("1", "true", "yes", "on")
    store = Store(find_workspace(Path.cwd(), args.workspace), read_only=read_only)
    try:
        outcome = guarded(lambda: args.run(args, store))
    except UsageError as exc:
        print(f"engram {args.command}: {exc}", file=sys.stderr)
        return 2
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
