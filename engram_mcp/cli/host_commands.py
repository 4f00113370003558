"""CLI commands for the hosts: `link`, `unlink`, `upgrade`, `doctor` (engram_mcp.hosts).

`add_commands(command)` adds them to the parser of engram_mcp.cli; they edit host configs, not
the store, so none is a `writing` command. A target that is not one (`engram link claud`) is a
usage error naming the closest target (exit 2); `all` is every host in turn. A file's diff is
printed with `--dry-run` only; each command's `next:` lines come last. What `link` must say before it writes (the
files will not be portable, the folder is outside git) goes to stderr first, and into the JSON
envelope's `data.warnings`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from engram_mcp.cli import code_commands
from engram_mcp.cli.common import did_you_mean
from engram_mcp.hosts.doctor import health
from engram_mcp.hosts.doctor.doctor import doctor
from engram_mcp.hosts.doctor.doctor import upgrade as upgrade_hosts
from engram_mcp.hosts.doctor.findings import INFORMATIONAL
from engram_mcp.hosts.errors import LinkRefused
from engram_mcp.hosts.link.every_host import ALL, failed_targets, link_all, unlink_all
from engram_mcp.hosts.link.link import Result
from engram_mcp.hosts.link.link import link as link_host
from engram_mcp.hosts.link.link import unlink as unlink_host
from engram_mcp.hosts.targets import TARGETS
from engram_mcp.ops.outcome import Outcome, failure
from engram_mcp.ops.reports import in_workspace
from store.plurals import count
from store.safety import untrusted
from store.store import Store

CHOICES = (*TARGETS, ALL)
"""What `link` and `unlink` take: a host, or `all` (engram_mcp.hosts.link.every_host)."""


def target_name(word: str) -> str:
    """argparse's `type` for a target: the name, or an error naming the closest ones (exit 2)."""
    if word in CHOICES:
        return word
    shown = untrusted.line(word, 60)
    close = did_you_mean(word, CHOICES)
    if close is None:
        raise argparse.ArgumentTypeError(f"unknown target {shown!r}; the targets are {', '.join(CHOICES)}")
    raise argparse.ArgumentTypeError(f"unknown target {shown!r}. {close}")


class _Warnings:
    """What `link` says before it writes: printed to stderr at once, kept for the envelope."""

    def __init__(self) -> None:
        self.said: list[dict[str, str]] = []

    def __call__(self, code: str, message: str) -> None:
        self.said.append({"code": code, "message": message})
        print(f"warning: {code}: {message}", file=sys.stderr, flush=True)


def _results(
    results: list[Result],
    *,
    dry_run: bool,
    extra: Mapping[str, Any] = {},
    every: str = "",
) -> Outcome:
    """Each file's line (its diff under it with `dry_run` only), then every `next:` line, last.
    `every` (linked, unlinked) is for `all`: the command ran even where one host failed, so its
    verdict is `data.ok`, with the hosts that failed named last before the `next:` lines."""
    lines = [r.line() + (("\n" + r.diff.rstrip("\n")) if dry_run and r.diff else "") for r in results]
    steps = [f"next: {r.step}" for r in results if r.step]
    data: dict[str, Any] = {
        "results": [
            {
                "target": r.target,
                "file": r.file,
                "action": r.action,
                "message": r.message,
                "step": r.step,
                "code": r.code,
            }
            for r in results
        ],
        **extra,
    }
    failed = [r for r in results if r.failed]
    diagnostics = tuple((r.code or "ENGRAM_HOST", r.line()) for r in failed)
    if every:
        names = failed_targets(results)
        if names:
            lines.append(f"not {every}: {', '.join(names)} (the lines above say why)")
        data.update(ok=not names, failed=names)
        return Outcome(True, "\n".join([*lines, *steps]), data, diagnostics)
    if failed:
        return Outcome(False, "\n".join([*lines, *steps]), data, diagnostics)
    return Outcome(True, "\n".join([*lines, *steps]) or "nothing to do", data)


def _refused(exc: LinkRefused) -> Outcome:
    return failure(exc.code, exc.message)


def _link(args: argparse.Namespace, store: Store) -> Outcome:
    warnings = _Warnings()
    every = args.target == ALL
    try:
        results = (link_all if every else partial(link_host, args.target))(
            store.workspace,
            global_=args.global_,
            force=args.force,
            dry_run=args.dry_run,
            no_hook=args.no_hook,
            machine_local=args.machine_local,
            warn=warnings,
        )
    except LinkRefused as exc:
        return _refused(exc)
    extra = {"warnings": warnings.said}
    return _results(results, dry_run=args.dry_run, extra=extra, every="linked" if every else "")


def _unlink(args: argparse.Namespace, store: Store) -> Outcome:
    every = args.target == ALL
    try:
        results = (unlink_all if every else partial(unlink_host, args.target))(
            store.workspace, global_=args.global_, force=args.force, dry_run=args.dry_run
        )
    except LinkRefused as exc:
        return _refused(exc)
    return _results(results, dry_run=args.dry_run, every="unlinked" if every else "")


def _upgrade(args: argparse.Namespace, store: Store) -> Outcome:
    warnings = _Warnings()
    results, refused = upgrade_hosts(
        store.workspace, dry_run=args.dry_run, machine_local=args.machine_local, warn=warnings
    )
    outcome = _results(results, dry_run=args.dry_run, extra={"warnings": warnings.said})
    if refused is None:
        return outcome
    text = "\n".join(
        line for line in (outcome.text if results else "", f"{refused.code}: {refused.message}") if line
    )
    return Outcome(False, text, outcome.data, (*outcome.diagnostics, (refused.code, refused.message)))


# --- doctor ----------------------------------------------------------------------------------------
def _doctor(args: argparse.Namespace, store: Store) -> Outcome:
    here = in_workspace(store)
    linked, findings, steps = doctor(store.workspace, workspace_files=here)
    for finding in health.findings(store.workspace if here else None, os.environ):
        (steps if finding.code in INFORMATIONAL else findings).append(finding)
    lines = [f"linked: {line}" for line in linked] or [
        "no host config has an engram entry yet (see `engram link`)"
    ]
    if not here:
        lines.append(
            f"no project here ({untrusted.line(str(store.workspace))}): only your user-level host "
            "files and $ENGRAM_HOME were checked"
        )
    lines += [f.line() for f in (*findings, *steps)]
    data: dict[str, Any] = {
        "ok": not findings,
        "workspace": here,
        "linked": linked,
        "findings": [f.data() for f in findings],
        "steps": [f.data() for f in steps],
    }
    if here:
        memory_line, data["memory"] = code_commands.health_line(store)  # stale, review, expired
        lines.append(memory_line)
    if findings:  # the command ran; its verdict (data.ok false) exits 1
        return Outcome(
            True, "\n".join(lines), data, tuple((f.code, f"{f.file}: {f.message}") for f in findings)
        )
    pending = f" ({count(len(steps), 'step')} still to do, above)" if steps else ""
    return Outcome(True, "\n".join([*lines, f"OK: nothing to fix{pending}."]), data)


def add_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register the host commands with `cli.build_parser`'s `command` helper."""
    machine_local = (
        "write this machine's absolute path when PATH here does not find engram-mcp (the project's "
        "files then work only on this machine: do not commit them)"
    )
    every = "a host, or `all`: every host in turn (one failing does not stop the others)"
    dry_run = "print each file's diff; write nothing (the only way to see the diff)"
    link = command("link", _link, "register engram-mcp with a host, or `all` (workspace scope by default)")
    link.add_argument("target", type=target_name, choices=CHOICES, help=every)
    link.add_argument("--global", dest="global_", action="store_true", help="the host's user-level config")
    link.add_argument("--force", action="store_true", help="replace an `engram` entry that is not ours")
    link.add_argument("--dry-run", action="store_true", help=dry_run)
    link.add_argument("--no-hook", action="store_true", help="claude: no SessionStart hook")
    link.add_argument("--machine-local", action="store_true", help=machine_local)
    unlink = command("unlink", _unlink, "remove engram's entry from a host config, or from `all`")
    unlink.add_argument("target", type=target_name, choices=CHOICES, help=every)
    unlink.add_argument("--global", dest="global_", action="store_true", help="the host's user-level config")
    unlink.add_argument("--force", action="store_true", help="also remove an `engram` entry that is not ours")
    unlink.add_argument("--dry-run", action="store_true", help=dry_run)
    upgrade = command("upgrade", _upgrade, "re-pin every engram entry to this installation")
    upgrade.add_argument("--dry-run", action="store_true", help=dry_run)
    upgrade.add_argument("--machine-local", action="store_true", help=machine_local)
    command(
        "doctor",
        _doctor,
        "check every host config for engram (exit 1 when something needs fixing)",
        looking=True,  # it only looks: nothing is written or repaired while it checks
    )
