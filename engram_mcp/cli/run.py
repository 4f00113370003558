"""Running one `engram` command line: parse it, find the workspace, refuse a commit from an
agent's shell, open the store, run the command and print its outcome (text, or the envelope
with `--json`), turning Ctrl-C, SIGTERM and a closed pipe into quiet exits."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType

import orjson

from engram_mcp import platform
from engram_mcp.cli.commands import build_parser
from engram_mcp.cli.common import unknown_command
from engram_mcp.errors import Fixable, Terminated, UsageError
from engram_mcp.ops import agent_shell
from engram_mcp.ops.hook import session_start
from engram_mcp.ops.outcome import Outcome, failure, guarded, store_failure
from engram_mcp.ops.wording import cli_wording
from store.errors import UNWRITABLE_ERRNOS, NoWorkspace, StoreError, unwritable
from store.files.workspace import find_workspace
from store.safety import untrusted
from store.store import Store
from store.write import transaction


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextlib.contextmanager
def _quiet_exits() -> Iterator[None]:
    """A stop signal (SIGTERM; Ctrl+Break on Windows: engram_mcp.platform) becomes an exception
    for the duration (the previous handlers are restored after)."""
    with platform.on_stop_signals(_on_sigterm):
        yield


def _silence_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null so the interpreter's last flush is quiet."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit code (SPEC §7). Ctrl-C exits 130, SIGTERM 143, a closed
    pipe 0, each without a traceback."""
    try:
        with _quiet_exits():
            return _main(argv)
    except KeyboardInterrupt:
        return 130
    except Terminated:
        return platform.STOPPED_EXIT
    except BrokenPipeError:
        _silence_stdout()
        return 0


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    words = sys.argv[1:] if argv is None else list(argv)
    if (unknown := unknown_command(words, parser.names())) is not None:
        print(unknown, file=sys.stderr)
        return 2
    args = parser.parse_args(words)
    if args.command is None:  # `engram` alone: what there is to run, and exit 2 as for any usage error
        print(parser.format_help(), end="", file=sys.stderr)
        return 2
    if args.command == "hook":
        return session_start(args.workspace, host=args.host)  # never fails the host's session start
    read_only = args.looking or os.environ.get("ENGRAM_READ_ONLY", "").lower() in ("1", "true", "yes", "on")
    try:
        workspace = find_workspace(Path.cwd(), args.workspace)
    except NoWorkspace as exc:  # a named folder that does not exist is never created
        named = "--workspace" if args.workspace else "ENGRAM_WORKSPACE"
        return _emit(args, failure(exc.code, exc.message.replace("the workspace ", f"{named} ", 1)))
    shell = agent_shell.detect() if args.writing else []  # SPEC §7: CLI writes are the human's
    if shell and args.command == "commit":
        return _emit(args, failure("ENGRAM_AGENT_SHELL", _agent_commit(shell)))
    store = Store(workspace, read_only=read_only, background=False)
    store.agent_shell = bool(shell)
    try:
        transaction.recover(store)
        store.clean_temps()
        outcome = guarded(lambda: args.run(args, store), writing=args.writing, words=cli_wording)
    except UsageError as exc:
        print(f"engram {args.command}: {exc}", file=sys.stderr)
        return 2
    except Fixable as exc:
        outcome = failure(exc.code, exc.message)
    except StoreError as exc:  # e.g. the workspace lock is busy at start-up recovery
        outcome = store_failure(exc, writing=True, words=cli_wording)
    except OSError as exc:  # a write the file system refused outside the lock (init, say)
        if exc.errno not in UNWRITABLE_ERRNOS:
            raise
        outcome = store_failure(unwritable("the workspace", exc), writing=True, words=cli_wording)
    finally:
        store.close()
    return _emit(args, outcome)


def _agent_commit(shell: Sequence[str]) -> str:
    """Why `engram commit` refused in an agent's shell, and the human's ways to approve."""
    return (
        f"engram commit runs only in your own terminal: this looks like an agent's shell "
        f"({agent_shell.described(shell)}), and a commit from there would be the agent approving "
        "its own proposal. Nothing was written; the proposal is still pending. To approve it: say "
        "yes in your host's own prompt when the agent calls engram_commit, or run "
        "`engram commit TOKEN` yourself in your own terminal (`engram pending` lists what is waiting)."
    )


def _emit(args: argparse.Namespace, outcome: Outcome) -> int:
    """Print the outcome (text, or the envelope with --json), worded for the CLI where it was
    made; the exit code."""
    text, diagnostics = outcome.text, outcome.diagnostics
    passed = outcome.ok and outcome.data.get("ok") is not False
    if args.json:
        shown = Outcome(outcome.ok, text, outcome.data, diagnostics)
        sys.stdout.write(
            untrusted.json_text(orjson.dumps(shown.envelope(), option=orjson.OPT_INDENT_2)).decode() + "\n"
        )
    else:
        print(text, file=sys.stdout if outcome.ok else sys.stderr)
        if outcome.ok:  # notes add what the text does not say already (doctor's findings do)
            for code, message in diagnostics:
                if message not in text:
                    print(f"note: {code}: {message}", file=sys.stderr)
    sys.stdout.flush()
    return 0 if passed else 1
