"""`engram`: the command line, the human's own terminal (SPEC §7); its entry point is engram_mcp.cli.

Every command has `--json`: the same envelope as the tools' `structuredContent`,
`{contract_version: 1, ok, data, diagnostics}`, with one meaning of `ok` for both: **the
command ran**. `ok: false` means it could not (a bad token, a missing memory, a refused write:
the code and the fix are in `diagnostics`), and nothing was written. A command that judges
something carries its verdict in `data`: `verify` and `doctor` answer `ok: true` with
`data.ok: false` when the store or a host needs attention, exactly as `engram_verify` does.

Exit codes: 0 ok (and `data.ok` not false), 1 a failure the user can fix or a verdict that
needs attention (the message says how), 2 a usage error. Text goes to stdout; failures to
stderr. A closed pipe (`engram load --full | head -1`) exits 0 quietly; SIGINT and SIGTERM exit
130 and 143 without a traceback. Messages name commands and flags, never tool arguments.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from engram_mcp import __version__
from engram_mcp.cli import code_commands, host_commands, memory_commands, ui_command
from engram_mcp.cli.common import CommandParser, checked, memory_id_arg
from engram_mcp.errors import Fixable, UsageError
from engram_mcp.intake.transcripts import host_problem
from engram_mcp.intake.transcripts.sessions import session_candidates
from engram_mcp.mcp.tools.read_tools import LOAD_INPUT, ROUTE_INPUT, SEARCH_INPUT
from engram_mcp.mcp.tools.write_tools import NOTE_INPUT
from engram_mcp.ops import read_ops, write_ops
from engram_mcp.ops.hook import HOSTS as HOOK_HOSTS
from engram_mcp.ops.outcome import Outcome, failure
from engram_mcp.ops.previews import report_outcome, token_outcome
from engram_mcp.ops.wording import cli_wording
from store.errors import Next
from store.plurals import count
from store.propose import mining
from store.safety import untrusted
from store.store import Store
from store.write import commits, notes, proposals, review, transaction

Command = Callable[[argparse.Namespace, Store], Outcome]


def _init(args: argparse.Namespace, store: Store) -> Outcome:
    created = store.init()
    text = (
        f"engram: created {', '.join(created)} in {untrusted.line(store.workspace, 1000)}"
        if created
        else f"engram: {untrusted.line(store.workspace, 1000)}/.engram is already set up"
    )
    return Outcome(True, text, {"workspace": str(store.workspace), "created": created})


def _verify(args: argparse.Namespace, store: Store) -> Outcome:
    recorded: dict[str, list[str]] = {}
    if args.accept:
        if store.read_only:
            raise UsageError("--accept writes the index; it is not allowed with ENGRAM_READ_ONLY")
        before = review.verify(store)
        recorded = {key: before[key] for key in ("mismatched", "unindexed", "missing", "agent_shell")}
        review.accept(store)
    outcome = read_ops.verify(store)
    if not args.accept:
        return outcome
    names = {
        "mismatched": "edited",
        "unindexed": "added",
        "missing": "gone",
        "agent_shell": f"written {read_ops.WITHOUT_TERMINAL}",
    }
    listed = [f"{names[key]}: {', '.join(ids)}" for key, ids in recorded.items() if ids]
    text = (
        "Recorded as reviewed: " + "; ".join(listed) + "."
        if listed
        else "Recorded as reviewed: nothing had changed."
    )
    if store.agent_shell and listed:  # SPEC §7: the agent's accept is listed, not the human's
        text = (
            "Recorded as accepted from an agent's shell, so verify keeps listing it until you run "
            "`engram verify --accept` in your own terminal: " + "; ".join(listed) + "."
        )
    unparsed = outcome.data.get("unparsed") or []
    if unparsed:  # never recorded as gone: their last reviewed version stands
        text += (
            f" Kept the last record of {count(len(unparsed), 'file')} that cannot be used: "
            + ", ".join(unparsed)
            + " (fix by hand, then run verify again)."
        )
    data = {**outcome.data, "accepted": recorded}
    return Outcome(outcome.ok, text + "\n" + outcome.text, data, outcome.diagnostics)


def _search(args: argparse.Namespace, store: Store) -> Outcome:
    arguments = checked(
        SEARCH_INPUT,
        {"query": args.query, "limit": args.limit, "types": args.type or None, "scope": args.scope},
        {"query": "QUERY", "limit": "--limit", "types": "--type", "scope": "--scope"},
    )
    return read_ops.search(store, arguments, cli_wording)


def _index(args: argparse.Namespace, store: Store) -> Outcome:
    """Embed every memory still waiting for its vectors now, with a progress bar on stderr: a
    CLI read never waits for a build it could not finish (it answers from BM25 and says so)."""
    bar = _ProgressBar()
    state = store.finder.build_vectors(bar.show)
    bar.end()
    if state["state"] == "off":
        return Outcome(True, "The vector signal is off: search uses BM25 alone (nothing to build).", state)
    if state["state"] != "ready":
        problem = state.get("problem", "the build did not finish")
        return failure("ENGRAM_VECTORS_UNAVAILABLE", f"vectors not built: {problem}")
    text = f"Vectors ready: {state['embedded']:,} of {count(state['memories'], 'memory')} embedded ({state['model']})."
    return Outcome(True, text, state)


class _ProgressBar:
    """`done of total` on stderr: redrawn in place on a terminal, a line every few seconds
    otherwise (a log)."""

    def __init__(self) -> None:
        self._tty = sys.stderr.isatty()
        self._said = 0.0
        self._drawn = False

    def show(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self._tty and now - self._said < 5.0:
            return
        self._said = now
        filled = 30 * done // max(total, 1)
        line = f"embedding memories [{'#' * filled}{'.' * (30 - filled)}] {done:,} of {total:,}"
        print(f"\r{line}" if self._tty else line, end="" if self._tty else "\n", file=sys.stderr, flush=True)
        self._drawn = self._tty

    def end(self) -> None:
        if self._drawn:
            print(file=sys.stderr)


def _route(args: argparse.Namespace, store: Store) -> Outcome:
    return read_ops.route(store, checked(ROUTE_INPUT, {"task": args.task}, {"task": "TASK"}))


def _load(args: argparse.Namespace, store: Store) -> Outcome:
    arguments = checked(
        LOAD_INPUT,
        {
            "query": args.query,
            "id": memory_id_arg("--id", args.id),
            "budget_tokens": args.budget,
            "disclosure": args.disclosure,
            "full": args.full or None,
            "explain": args.explain or None,
            "objective": args.objective,
            "include_stale": args.include_stale or None,
        },
        {
            "query": "QUERY",
            "id": "--id",
            "budget_tokens": "--budget",
            "disclosure": "--disclosure",
            "objective": "--objective",
        },
    )
    return read_ops.load(store, arguments, cli_wording)


def _read_text(source: str, flag: str = "--text") -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text("utf-8")
    except OSError as exc:
        raise Fixable(
            "ENGRAM_NOT_FOUND",
            f"{flag} {source}: cannot read it ({exc.strerror}); name a readable file or - for stdin",
        ) from None
    except UnicodeDecodeError:
        raise Fixable("ENGRAM_VALIDATION", f"{flag} {source} is not UTF-8 text") from None


def _save_session(args: argparse.Namespace, store: Store) -> Outcome:
    if args.host is not None and (problem := host_problem(args.host)) is not None:
        raise UsageError(problem)
    if args.host is not None and args.text is not None:
        raise UsageError(
            "--host NAME reads that host's sessions: use it alone or with --query-level N, not --text"
        )
    if args.text is not None and args.query_level is not None:
        raise UsageError("pass one of --text FILE (or - for stdin) and --query-level N, not both")
    if args.text is None and args.query_level is None:
        args.query_level = 1  # this session: the latest host session of this workspace
    if args.force:
        transaction.check_workspace(store)  # before mining: the write would be refused anyway
    if args.query_level is not None:
        if not 1 <= args.query_level <= 1000:
            raise UsageError("--query-level takes 1 to 1000 sessions")
        raw, note = session_candidates(store.workspace, args.query_level, args.host)
    else:
        raw, note = mining.mine(_read_text(args.text))
    if not raw:
        return failure(
            "ENGRAM_VALIDATION",
            "no explicit knowledge lines found"
            + (f" ({note})" if note else "")
            + f"; {cli_wording(Next('save_instead'))}",
            written=False,
        )
    entries, redactions = proposals.draft(store, raw)
    if not args.force:
        outcome = token_outcome(
            proposals.store_proposal(store, entries, redactions, "save_session"), hint=cli_wording
        )
        return Outcome(True, (note + "\n" if note else "") + outcome.text, outcome.data)
    adds = [e for e in entries if e.verdict.kind == "ADD"]
    rest = [replace(e, n=n) for n, e in enumerate((e for e in entries if e.verdict.kind != "ADD"), 1)]
    outcome = report_outcome(
        commits.apply_entries(store, adds) if adds else commits.CommitReport(), words=cli_wording
    )
    outcome = (
        Outcome(outcome.ok, (note + "\n" if note else "") + outcome.text, outcome.data) if note else outcome
    )
    if not rest:
        return outcome
    deferred = proposals.store_proposal(store, rest, redactions, "save_session")
    kept = f"Not saved, kept for your review ({count(len(rest), 'candidate')} updating or repeating a saved memory):\n"
    review = token_outcome(deferred, prefix=kept, hint=cli_wording)
    data = {**outcome.data, "review": review.data}
    return Outcome(True, outcome.text + "\n\n" + review.text, data)


def _commit(args: argparse.Namespace, store: Store) -> Outcome:
    approve = commits.parse_approve(args.approve)
    if approve != "all" and not isinstance(approve, list):
        raise UsageError(f"{cli_wording(Next('approve_forms'))}, not {args.approve[:40]!r}")
    return write_ops.commit(store, args.token, approve, cli_wording, where="cli")


def _note(args: argparse.Namespace, store: Store) -> Outcome:
    arguments = checked(
        NOTE_INPUT,
        {"text": args.text, "objective": args.objective, "type": args.type},
        {"text": "TEXT", "objective": "--objective", "type": "--type"},
    )
    draft = notes.draft_note(store, arguments["text"], arguments.get("objective", ""), arguments.get("type"))
    saved = notes.save_note(store, draft)  # running the command is the human's approval
    return Outcome(
        True, f"Saved note {saved['id']} ({saved['file']}), valid until {saved['valid_until']}.", saved
    )


def _promote(args: argparse.Namespace, store: Store) -> Outcome:
    return token_outcome(proposals.promote(store, args.id, args.type), hint=cli_wording)


def _gc(args: argparse.Namespace, store: Store) -> Outcome:
    removed = notes.gc(store)
    text = f"Removed {count(len(removed), 'expired note')}" + (": " + ", ".join(removed) if removed else ".")
    return Outcome(True, text, {"removed": removed})


def _hook(args: argparse.Namespace, store: Store) -> Outcome:
    raise AssertionError("handled in main")


def _global_flags(defaults: bool) -> argparse.ArgumentParser:
    """`--json` and `--workspace`, accepted before or after the command (SPEC §7). Only the
    top-level parser sets defaults, so a flag given before the command is not reset after it."""
    flags = argparse.ArgumentParser(add_help=False)
    unset: Any = None if defaults else argparse.SUPPRESS
    flags.add_argument(
        "--json",
        action="store_true",
        default=False if defaults else argparse.SUPPRESS,
        help="print the JSON envelope instead of text",
    )
    flags.add_argument(
        "--workspace",
        metavar="DIR",
        default=unset,
        help="the workspace (default: discovered from the current folder)",
    )
    return flags


def build_parser() -> CommandParser:
    parser = CommandParser(
        prog="engram",
        usage="engram [--json] [--workspace DIR] COMMAND [ARGS]",
        description="Local, git-friendly memory for coding agents.",
        epilog="`engram COMMAND --help` shows a command's arguments and options.",
        parents=[_global_flags(True)],
    )
    parser.add_argument("--version", action="version", version=f"engram {__version__}")
    parser.set_defaults(looking=False)  # also for a command made without `command()` (export)
    # the commands are listed by group in the help (CommandParser), not in argparse's flat list
    sub = parser.add_subparsers(
        dest="command",
        metavar="COMMAND",
        help=argparse.SUPPRESS,
        prog="engram",
        parser_class=argparse.ArgumentParser,
    )
    inner = _global_flags(False)

    def command(
        name: str,
        run: Command,
        help_text: str,
        aliases: Sequence[str] = (),
        *,
        writing: bool = False,
        looking: bool = False,
    ) -> argparse.ArgumentParser:
        """`writing`: the command writes the store, so its errors say whether anything was written.
        `looking`: it only looks (doctor), so the store opens read-only: no journal replayed, no
        derived file written or discarded before it has reported what it found."""
        p = sub.add_parser(
            name, help=help_text, description=help_text, parents=[inner], aliases=list(aliases)
        )
        p.set_defaults(run=run, command=name, writing=writing, looking=looking)
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
    command("index", _index, "embed every memory for the vector signal now, with a progress bar")
    route = command("route", _route, "classify a task and list the memories it routes to, in load order")
    route.add_argument("task")
    load = command("load", _load, "tiered memory for a task under a token budget")
    load.add_argument(
        "query", nargs="?", help="the task; omit for the session's load (what the SessionStart hook prints)"
    )
    load.add_argument("--id", help="load exactly this memory's body")
    load.add_argument("--budget", type=int, help="token budget (100-32000, default from config: 2000)")
    load.add_argument("--disclosure", help="tiered (default), cards or bodies")
    load.add_argument("--full", action="store_true", help="every active memory's body, up to the hard cap")
    load.add_argument("--explain", action="store_true", help="say why each memory was selected")
    load.add_argument("--objective", help="session objective (default $ENGRAM_SESSION_OBJECTIVE)")
    load.add_argument("--include-stale", action="store_true", help="give stale memories as bodies, not cards")
    session = command(
        "save-session",
        _save_session,
        "propose knowledge lines from session text (alias: ss)",
        aliases=["ss"],
        writing=True,
    )
    session.add_argument("--text", metavar="FILE", help="the session text, or - for stdin")
    session.add_argument(
        "--query-level",
        type=int,
        metavar="N",
        help="mine the last N host sessions of this workspace (the default, with N 1: this session)",
    )
    session.add_argument(
        "--host",
        metavar="NAME",
        help="read only this host's sessions: claude, codex, gemini or opencode (what /engram passes)",
    )
    session.add_argument(
        "-f", "--force", action="store_true", help="write the ADDs now; defer the rest for review"
    )
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
    memory_commands.add_commands(command)
    host_commands.add_commands(command)  # link, unlink, upgrade, doctor
    ui_command.add_commands(command)  # ui: the local review page
    code_commands.register(command, sub)  # stale, history, import, export
    hook = command("hook", _hook, "host hooks: `engram hook session-start` (a host's session start)")
    hook.add_argument("event", choices=["session-start"])
    hook.add_argument(
        "--host", choices=HOOK_HOSTS, default="claude", help="the output the host takes (default: claude)"
    )
    return parser
