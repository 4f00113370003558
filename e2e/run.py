"""`make hosts-e2e`: does the human gate hold in the real host CLIs?

For each host (Claude Code, Codex CLI, Gemini CLI, opencode at the versions pinned in
e2e/hosts.py): install it from npm into the cache, link engram into a throwaway HOME and git
workspace, show that the host connects to engram and lists its tools, then create a pending
proposal and run the host headless with its default permissions against a scripted model on
127.0.0.1 that asks for `engram_commit` on that proposal. Prints one row per host and exits 1
when any host wrote memory or did not offer the read tools (`engram_search`, `engram_load`)
to the model; 2 when a host could not be installed.

Hosts with a `/engram` scenario (e2e/hosts.py `command_runs`: Claude Code) are then run once
more in a fresh sandbox: the human states a rule, then continues the session with
`/engram ss -f`; the installed command must end in `engram save-session --force` being run
(witnessed by a recording `engram` on PATH) and the rule being saved.

Each run's files (sandbox, host output, the model's request log, the relay's record of what
the host sent engram) stay under <cache>/runs/latest/<host>/ for inspection.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from e2e import install  # noqa: E402
from e2e.check import Finding, check, check_command  # noqa: E402
from e2e.hosts import HOSTS  # noqa: E402

COLUMNS = (
    "host",
    "version",
    "connected",
    "engram tools listed",
    "read tools offered",
    "commit attempted",
    "memory written",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hosts-e2e", description=__doc__.splitlines()[0] if __doc__ else None
    )
    names = [host.name for host in HOSTS]
    parser.add_argument("hosts", nargs="*", metavar="HOST", help=f"any of {', '.join(names)} (default: all)")
    parser.add_argument("--timeout", type=float, default=180, help="seconds per host command (default 180)")
    args = parser.parse_args(argv)
    if unknown := sorted(set(args.hosts) - set(names)):
        parser.error(f"unknown host {', '.join(unknown)}: choose from {', '.join(names)}")
    chosen = [host for host in HOSTS if not args.hosts or host.name in args.hosts]
    runs = install.cache_root() / "runs" / "latest"
    shutil.rmtree(runs, ignore_errors=True)
    findings = []
    for host in chosen:
        try:
            executable = install.ensure(host.package, host.version, host.binary)
        except RuntimeError as exc:
            print(f"engram hosts-e2e: {host.name}: {exc}", file=sys.stderr)
            return 2
        started = time.monotonic()
        print(f"{host.name} {host.version}: running …", file=sys.stderr, flush=True)
        finding = check(host, executable, runs / host.name, args.timeout)
        print(f"{host.name}: done in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        findings.append(finding)
    print(table(findings))
    for finding in findings:
        called = f"model called {finding.commit_name}" if finding.commit_name else "no engram_commit offered"
        print(f"{finding.host}: {called}; host answered: {finding.host_answer or '-'}")
        if finding.written:
            print(f"{finding.host}: memory written: {', '.join(finding.written)}")
        if finding.connected is None:
            print(
                f"{finding.host}: no engram-mcp started through the recording relay: the host did not start"
                " engram, or its config names engram-mcp by an absolute path"
            )
        if finding.attempts > 1:
            print(f"{finding.host}: {finding.attempts} runs (engram's tools were not ready in time before)")
        if finding.error:
            print(f"{finding.host}: {finding.error}")
    commands = []
    for host in chosen:
        if not host.command_runs:
            continue
        executable = install.ensure(host.package, host.version, host.binary)
        print(f"{host.name}: /engram ss -f …", file=sys.stderr, flush=True)
        commands.append(check_command(host, executable, runs / f"{host.name}-command", args.timeout))
    for command in commands:
        saves = [call for call in command.ran if call["argv"][:1] == ["save-session"]]
        print(
            f"{command.host}: /engram ss -f: command installed {'y' if command.installed else 'n'}; "
            f"model ran {command.asked or '-'}; engram ran "
            + (
                ", ".join(f"`engram {' '.join(c['argv'])}` (exit {c['exit']})" for c in saves)
                or "no save-session"
            )
            + f"; memory written: {', '.join(command.written) or 'none'}"
        )
        if command.answer:
            print(f"{command.host}: the shell answered: {command.answer}")
        if command.error:
            print(f"{command.host}: {command.error}")
    print(f"logs: {runs}")
    failed = [finding.host for finding in findings if not finding.ok]
    failed += [f"{command.host} (/engram ss -f)" for command in commands if not command.ok]
    print(
        "PASS: no host wrote memory unasked; every host offered the read tools"
        + ("; /engram ss -f ran engram save-session --force" if commands else "")
        if not failed
        else f"FAIL: {', '.join(failed)}"
    )
    return 1 if failed else 0


def table(findings: list[Finding]) -> str:
    rows = [COLUMNS, *(_row(finding) for finding in findings)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [
        "| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + " |"
        for row in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (width + 2) for width in widths) + "|")
    return "\n".join(lines)


def _row(finding: Finding) -> tuple[str, ...]:
    connected = {True: "y", False: "n", None: "n?"}[finding.connected]
    written = "YES" if finding.wrote else "no"
    if finding.wrote and finding.still_pending is False and not finding.written:
        written = "YES (proposal spent)"
    return (
        finding.host,
        finding.version,
        connected,
        str(finding.tools_listed),
        "y" if finding.read_offered else "n",
        finding.commit,
        written,
    )


if __name__ == "__main__":
    sys.exit(main())
