"""CLI commands for the hosts: `link`, `unlink`, `upgrade`, `doctor` (engram_mcp.hosts).

`add_commands(command)` adds them to the parser of engram_mcp.cli; they edit host configs, not
the store, so none is a `writing` command.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from engram_mcp.cli import code_commands
from engram_mcp.hosts.doctor import doctor
from engram_mcp.hosts.doctor import upgrade as upgrade_hosts
from engram_mcp.hosts.link import Result
from engram_mcp.hosts.link import link as link_host
from engram_mcp.hosts.link import unlink as unlink_host
from engram_mcp.hosts.targets import TARGETS
from engram_mcp.outcome import Outcome
from store.store import Store


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
        "ok": not findings,
        "linked": linked,
        "findings": [f.data() for f in findings],
        "steps": [f.data() for f in steps],
    }
    memory_line, data["memory"] = code_commands.health_line(store)  # issue 13: stale, review, expired counts
    lines.append(memory_line)
    if findings:  # the command ran; its verdict (data.ok false) exits 1
        return Outcome(
            True, "\n".join(lines), data, tuple((f.code, f"{f.file}: {f.message}") for f in findings)
        )
    pending = f" ({len(steps)} host step(s) still to do, above)" if steps else ""
    return Outcome(True, "\n".join([*lines, f"OK: nothing to fix{pending}."]), data)


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register the host commands with `cli.build_parser`'s `command` helper."""
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
