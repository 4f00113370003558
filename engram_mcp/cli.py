"""`engram`: the command line. Every read command has `--json` (the tool's envelope).

Exit codes: 0 ok, 1 a failure the user can fix (the message says how), 2 a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from engram_mcp import __version__
from engram_mcp.hook import session_start
from engram_mcp.hosts.doctor import doctor
from engram_mcp.hosts.doctor import upgrade as upgrade_hosts
from engram_mcp.hosts.link import Result
from engram_mcp.hosts.link import link as link_host
from engram_mcp.hosts.link import unlink as unlink_host
from engram_mcp.hosts.targets import TARGETS
from engram_mcp.ops import read_ops, write_ops
from engram_mcp.ops.previews import report_outcome, token_outcome
from engram_mcp.outcome import Outcome, failure, guarded, store_failure
from engram_mcp.tools.read_tools import LOAD_INPUT, ROUTE_INPUT, SEARCH_INPUT
from engram_mcp.tools.write_tools import NOTE_INPUT
from engram_mcp.transcripts import session_candidates
from protocol.validation import compile_validator
from store import commits, mining, notes, proposals, review, transaction
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
        review.accept(store)
    outcome = read_ops.verify(store)
    if not outcome.data.get("ok", False):
        return Outcome(False, outcome.text, outcome.data, outcome.diagnostics)
    return outcome


def _search(args: argparse.Namespace, store: Store) -> Outcome:
    arguments = _checked(
        SEARCH_INPUT,
        {"query": args.query, "limit": args.limit, "types": args.type or None, "scope": args.scope},
    )
    return read_ops.search(store, arguments)


def _route(args: argparse.Namespace, store: Store) -> Outcome:
    return read_ops.route(store, _checked(ROUTE_INPUT, {"task": args.task}))


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
    return read_ops.load(store, arguments)


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
    if (args.text is None) == (args.query_level is None):
        raise UsageError("pass exactly one of --text FILE (or - for stdin) and --query-level N")
    if args.query_level is not None:
        if not 1 <= args.query_level <= 1000:
            raise UsageError("--query-level takes 1 to 1000 sessions")
        raw, note = session_candidates(store.workspace, args.query_level)
    else:
        raw, note = mining.extract_candidates(_read_text(args.text)), ""
    if not raw:
        return failure(
            "ENGRAM_VALIDATION",
            "no explicit knowledge lines found" + (f" ({note})" if note else ""),
            written=False,
        )
    entries, redactions = proposals.draft(store, raw)
    if not args.force:
        outcome = token_outcome(proposals.store_proposal(store, entries, redactions, "save_session"))
        return Outcome(True, (note + "\n" if note else "") + outcome.text, outcome.data)
    adds = [e for e in entries if e.verdict.kind == "ADD"]
    rest = [replace(e, n=n) for n, e in enumerate((e for e in entries if e.verdict.kind != "ADD"), 1)]
    outcome = report_outcome(commits.apply_entries(store, adds) if adds else commits.CommitReport())
    if not rest:
        return outcome
    deferred = proposals.store_proposal(store, rest, redactions, "save_session")
    review = token_outcome(deferred, prefix="Deferred for review (related or duplicate):\n")
    data = {**outcome.data, "review": review.data}
    return Outcome(True, outcome.text + "\n\n" + review.text, data)


def _commit(args: argparse.Namespace, store: Store) -> Outcome:
    approve: object = "all"
    if args.approve != "all":
        try:
            approve = [int(part) for part in args.approve.split(",") if part.strip()]
        except ValueError:
            raise UsageError('--approve takes "all" or numbers like 1,3') from None
    return write_ops.commit(store, args.token, approve)


def _note(args: argparse.Namespace, store: Store) -> Outcome:
    arguments = _checked(NOTE_INPUT, {"text": args.text, "objective": args.objective, "type": args.type})
    draft = notes.draft_note(store, arguments["text"], arguments.get("objective", ""), arguments.get("type"))
    saved = notes.save_note(store, draft)  # running the command is the human's approval
    return Outcome(
        True, f"Saved note {saved['id']} ({saved['file']}), valid until {saved['valid_until']}.", saved
    )


def _promote(args: argparse.Namespace, store: Store) -> Outcome:
    return token_outcome(proposals.promote(store, args.id, args.type))


def _gc(args: argparse.Namespace, store: Store) -> Outcome:
    removed = notes.gc(store)
    text = f"Removed {len(removed)} expired note(s)" + (": " + ", ".join(removed) if removed else ".")
    return Outcome(True, text, {"removed": removed})


def _results(results: list[Result], data_key: str = "results") -> Outcome:
    lines = [
        r.line() + (("\n" + r.diff.rstrip("\n")) if r.diff else "") + (f"\nnext: {r.step}" if r.step else "")
        for r in results
    ]
    data = {
        data_key: [
            {"target": r.target, "file": r.file, "action": r.action, "message": r.message, "step": r.step}
            for r in results
        ]
    }
    failed = [r for r in results if r.failed]
    if failed:
        return Outcome(False, "\n".join(lines), data, tuple(("ENGRAM_HOST", r.line()) for r in failed))
    return Outcome(True, "\n".join(lines) or "nothing to do", data)


def _link(args: argparse.Namespace, store: Store) -> Outcome:
    return _results(
        link_host(
            args.target,
            store.workspace,
            global_=args.global_,
            force=args.force,
            dry_run=args.dry_run,
            no_hook=args.no_hook,
        )
    )


def _unlink(args: argparse.Namespace, store: Store) -> Outcome:
    return _results(
        unlink_host(
            args.target, store.workspace, global_=args.global_, force=args.force, dry_run=args.dry_run
        )
    )


def _upgrade(args: argparse.Namespace, store: Store) -> Outcome:
    return _results(upgrade_hosts(store.workspace, dry_run=args.dry_run))


def _doctor(args: argparse.Namespace, store: Store) -> Outcome:
    linked, findings, steps = doctor(store.workspace)
    lines = [f"linked: {line}" for line in linked] or [
        "no host config has an engram entry yet (see `engram link`)"
    ]
    lines += [f.line() for f in (*findings, *steps)]
    data = {
        "linked": linked,
        "findings": [f.data() for f in findings],
        "steps": [f.data() for f in steps],
    }
    if findings:
        return Outcome(
            False, "\n".join(lines), data, tuple((f.code, f"{f.file}: {f.message}") for f in findings)
        )
    pending = f" ({len(steps)} host step(s) still to do, above)" if steps else ""
    return Outcome(True, "\n".join([*lines, f"OK: nothing to fix{pending}."]), data)


def _hook(args: argparse.Namespace, store: Store) -> Outcome:
    raise AssertionError("handled in main")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="engram", description="Local, git-friendly memory for coding agents."
    )
    parser.add_argument("--version", action="version", version=f"engram {__version__}")
    parser.add_argument("--workspace", metavar="DIR", help="the workspace (default: discovered from the cwd)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, run: Command, help_text: str, *, writing: bool = False) -> argparse.ArgumentParser:
        """`writing`: the command writes the store, so its errors say whether anything was written."""
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--json", action="store_true", help="print the JSON envelope instead of text")
        p.set_defaults(run=run, writing=writing)
        return p

    command("init", _init, "create .engram/ (memory/, working/, .gitignore) in the workspace", writing=True)
    command(
        "status", lambda a, s: read_ops.status(s), "workspace, counts, role, pending proposals, index hash"
    )
    verify = command(
        "verify", _verify, "check memory files against recorded hashes (exit 1 when not clean)", writing=True
    )
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
    session = command(
        "save-session", _save_session, "propose knowledge lines from session text", writing=True
    )
    session.add_argument("--text", metavar="FILE", help="the session text, or - for stdin")
    session.add_argument(
        "--query-level", type=int, metavar="N", help="mine the last N host sessions of this workspace"
    )
    session.add_argument("--force", action="store_true", help="write the ADDs now; defer the rest for review")
    commit = command("commit", _commit, "write the approved candidates of a proposal", writing=True)
    commit.add_argument("token")
    commit.add_argument("--approve", default="all", help='"all" (default) or numbers like 1,3')
    note = command("note", _note, "save a working note (expires after load.working_ttl_days)", writing=True)
    note.add_argument("text")
    note.add_argument("--objective", help="the session objective it belongs to")
    note.add_argument("--type", help="its durable type if promoted later")
    promote = command("promote", _promote, "propose a working note as durable memory", writing=True)
    promote.add_argument("id")
    promote.add_argument("--type", help="durable type (default: the note's, else fact)")
    command("gc", _gc, "remove expired working notes", writing=True)
    link = command("link", _link, "register engram-mcp with a host (workspace scope by default)")
    link.add_argument("target", choices=TARGETS)
    link.add_argument("--global", dest="global_", action="store_true", help="the host's user-level config")
    link.add_argument("--force", action="store_true", help="replace an `engram` entry that is not ours")
    link.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    link.add_argument("--no-hook", action="store_true", help="claude: no SessionStart hook")
    unlink = command("unlink", _unlink, "remove engram's entry from a host config")
    unlink.add_argument("target", choices=TARGETS)
    unlink.add_argument("--global", dest="global_", action="store_true", help="the host's user-level config")
    unlink.add_argument("--force", action="store_true", help="also remove an `engram` entry that is not ours")
    unlink.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    upgrade = command("upgrade", _upgrade, "re-pin every engram entry to this installation")
    upgrade.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    command("doctor", _doctor, "check every host config for engram (exit 1 when something needs fixing)")
    hook = command("hook", _hook, "host hooks: `engram hook session-start` (Claude Code SessionStart)")
    hook.add_argument("event", choices=["session-start"])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "hook":
        return session_start(args.workspace)  # never fails the host's session start
    read_only = os.environ.get("ENGRAM_READ_ONLY", "").lower() in ("1", "true", "yes", "on")
    store = Store(find_workspace(Path.cwd(), args.workspace), read_only=read_only)
    try:
        transaction.recover(store)
        store.clean_temps()
        outcome = guarded(lambda: args.run(args, store), writing=args.writing)
    except UsageError as exc:
        print(f"engram {args.command}: {exc}", file=sys.stderr)
        return 2
    except StoreError as exc:  # e.g. the workspace lock is busy at start-up recovery
        outcome = store_failure(exc, writing=True)
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
