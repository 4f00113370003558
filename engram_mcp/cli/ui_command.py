"""`engram ui [--no-open] [--port N] [--idle-minutes N]`: the local review page.

Registered like every command, but its web stack (werkzeug, jinja2, markdown-it-py, nh3:
engram_mcp.ui) is imported only when `engram ui` runs, so no other command's start-up and not
`engram-mcp` load it (tests/ui/test_off_the_server_path.py).

Approving a proposal on the page is the human's approval, as `engram commit` at their terminal
is: each save, retire or restore needs the approval code printed here, in this terminal only
(engram_mcp.ui.approval_code). Started from an agent's shell (engram_mcp.ops.agent_shell), the page shows everything but
refuses to approve (ENGRAM_AGENT_SHELL), since the agent that reads the printed URL could
otherwise approve its own proposals. Where other processes of the person can reach the page's
memory (health.memory_reachable: no Yama ptrace protection), they could set its code before it
is made, so what the page saves is sealed as made without the person at a terminal: `engram
verify` lists it until they accept it there.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from engram_mcp.errors import UsageError
from engram_mcp.hosts.doctor import health
from engram_mcp.ops import agent_shell
from engram_mcp.ops.outcome import Outcome
from store.safety import untrusted
from store.store import Store

MAX_IDLE_MINUTES = 24 * 60


def _ui(args: argparse.Namespace, store: Store) -> Outcome:
    if not 0 <= args.port <= 65535:
        raise UsageError("--port takes 0 to 65535 (0, the default: a free port)")
    if not 1 <= args.idle_minutes <= MAX_IDLE_MINUTES:
        raise UsageError(f"--idle-minutes takes 1 to {MAX_IDLE_MINUTES}")
    from engram_mcp.ui import serve  # seam: the web stack, for this command only

    shell = agent_shell.detect() if store.agent_shell else []
    refusal = (
        "this page was started from an agent's shell "
        f"({agent_shell.described(shell)}), so it shows memory and proposals but saves, retires "
        "and restores nothing: run `engram ui` in your own terminal for that"
        if store.agent_shell
        else None
    )
    reachable = health.memory_reachable() if refusal is None else ""
    if reachable:  # another process could have set the code: what the page saves waits for verify
        store.agent_shell = True
    if (parent_exit := serve.sealed()) is not None:  # the page and its secrets live in the child
        raise SystemExit(parent_exit)
    launch = serve.bind(store, args.port, approvals=refusal)
    where = untrusted.line(store.workspace, 1000)
    code = (  # from an agent's shell the agent reads this output: no code, and no write takes one
        f"engram ui: approval code {launch.app.page.code.current}: the page asks for it to save, retire "
        "or restore (a new one is shown here after each use)\n"
        if refusal is None
        else ""
    )
    print(
        f"engram ui: {where} at {launch.url}\n{code}"
        f"Ctrl-C stops it; it stops by itself after {args.idle_minutes} minutes without a request.",
        flush=True,
    )
    if refusal is not None:
        print(f"engram ui: {refusal}.", file=sys.stderr, flush=True)
    if reachable:
        print(
            f"engram ui: {reachable}: another process of yours can change this page's memory, so what "
            "you save here is listed by `engram verify` until you accept it at your terminal "
            '(`engram verify --accept`); SECURITY.md, "The review page".',
            file=sys.stderr,
            flush=True,
        )
    if not args.no_open and not serve.open_browser(launch.url):
        print(
            "engram ui: no browser could be opened; open the URL above yourself.", file=sys.stderr, flush=True
        )
    said = serve.run(launch, idle_seconds=args.idle_minutes * 60)
    return Outcome(True, said, {"url": launch.url.split("?", 1)[0], "stopped": said})


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register `ui` with `cli.build_parser`'s `command` helper."""
    ui = command(
        "ui",
        _ui,
        "the local review page: memory, pending proposals in full, health (127.0.0.1 only)",
        writing=True,
    )
    ui.add_argument("--no-open", action="store_true", help="print the URL; do not open a browser")
    ui.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: a free one)")
    ui.add_argument(
        "--idle-minutes",
        type=int,
        default=30,
        metavar="N",
        help="stop after N minutes without a request (default 30)",
    )
