"""`make hosts-e2e`: does the human gate hold in the real host CLIs?

For each host (Claude Code, Codex CLI, Gemini CLI, opencode at the versions pinned in
e2e/hosts.py): install it from npm into the cache, link engram into a throwaway HOME and git
workspace, show that the host connects to engram and lists its tools, then create a pending
proposal and run the host headless with its default permissions against a scripted model on
127.0.0.1 that asks for `engram_commit` on that proposal. Prints one row per host and exits 1
when any host wrote memory or did not offer the read and proposal tools (`engram_search`, `engram_load`, `engram_save`, `engram_save_session`)
to the model; 2 when a host could not be installed.

Hosts with a `/engram` scenario (e2e/hosts.py `command_runs`: Claude Code) are then run once
more in a fresh sandbox: the human states a rule, then continues the session with
`/engram ss -f`; the scripted model does what the installed command says (a shell command, or
`engram_save_session` then `engram_commit`), e2e/human.py answers for the human where the host
would ask them (Claude Code's Elicitation hook for engram's dialog, its permission prompt tool),
and the rule must be saved. A recording `engram` on PATH witnesses any CLI call.

Then the **shell** check per host (e2e/shell.py): a fresh proposal's token, and a scripted
model that runs `engram commit TOKEN` through the host's shell tool, then by engram's absolute
path, then with every known host variable unset and a terminal (`env -u …` inside `script`, or
Codex's `tty: true`), each in its own host run, with the same link config and trust step. It passes when nothing is written; the table says
which layer stopped it (the host: no shell tool, a denial or an unanswered prompt; engram:
its ENGRAM_AGENT_SHELL refusal).

`--probe` instead runs e2e/probe.py through each host's shell tool (with the permission that
lets it run) and prints what the host adds to its commands' environment, and whether they
have a terminal: the variables engram_mcp/ops/agent_shell.py looks for.

Each run's files (sandbox, host output, the model's request log, the relay's record of what
the host sent engram) stay under <cache>/runs/latest/<host>/ for inspection.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from e2e import install  # noqa: E402
from e2e.check import Finding, check, check_command  # noqa: E402
from e2e.hosts import HOSTS  # noqa: E402
from e2e.shell import Probe, ShellFinding, WritesFinding, check_shell, check_writes, probe  # noqa: E402

COLUMNS = (
    "host",
    "version",
    "connected",
    "engram tools listed",
    "read and proposal tools offered",
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
    parser.add_argument(
        "--probe", action="store_true", help="print what each host's shell tool gives its commands, then stop"
    )
    args = parser.parse_args(argv)
    if unknown := sorted(set(args.hosts) - set(names)):
        parser.error(f"unknown host {', '.join(unknown)}: choose from {', '.join(names)}")
    chosen = [host for host in HOSTS if not args.hosts or host.name in args.hosts]
    runs = install.cache_root() / "runs" / "latest"
    shutil.rmtree(runs, ignore_errors=True)
    if args.probe:
        return _probe(chosen, runs, args.timeout)
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
            f"model did {command.asked or '-'}; engram's CLI ran "
            + (
                ", ".join(f"`engram {' '.join(c['argv'])}` (exit {c['exit']})" for c in saves)
                or "no save-session"
            )
            + f"; memory written: {', '.join(command.written) or 'none'}"
        )
        for prompt in command.prompts:
            if "dialog" in prompt:
                print(
                    f"{command.host}: engram's dialog reached the human, who answered {prompt.get('answer')}"
                )
            else:
                print(
                    f"{command.host}: the host asked the human about {prompt.get('tool_name')}: "
                    f"{'yes' if prompt.get('answer') else 'no'}"
                )
        if command.answer:
            print(f"{command.host}: engram answered: {command.answer}")
        if command.error:
            print(f"{command.host}: {command.error}")
    shells = []
    for host in chosen:
        executable = install.ensure(host.package, host.version, host.binary)
        print(f"{host.name}: shell …", file=sys.stderr, flush=True)
        shells.append(check_shell(host, executable, runs / f"{host.name}-shell", args.timeout))
    for shell in shells:
        for n, attempt in enumerate(shell.tries, 1):
            code = f" (exit {attempt.exit})" if attempt.exit is not None else ""
            reached = f"engram ran it{code}" if attempt.reached else "engram never ran"
            print(
                f"{shell.host}: shell try {n}: `{attempt.command}`: {reached}; host answered: {attempt.answer or '-'}"
            )
        if shell.written:
            print(f"{shell.host}: shell: memory written: {', '.join(shell.written)}")
        if shell.error:
            print(f"{shell.host}: shell: {shell.error}")
    writes = []
    for host in chosen:
        executable = install.ensure(host.package, host.version, host.binary)
        print(f"{host.name}: shell writes …", file=sys.stderr, flush=True)
        writes.append(check_writes(host, executable, runs / f"{host.name}-writes", args.timeout))
    for write in writes:
        print(
            f"{write.host}: shell writes: the host ran {len(write.ran)} of {write.asked} "
            f"({'; '.join(write.ran) or '-'}); memory written: {', '.join(write.written) or 'none'}; "
            f"verify lists: {', '.join(write.listed) or 'nothing'}"
        )
    print()
    print(summary(findings, shells, commands, writes))
    print(f"logs: {runs}")
    failed = [finding.host for finding in findings if not finding.ok]
    failed += [f"{shell.host} (shell)" for shell in shells if not shell.ok]
    failed += [f"{write.host} (shell writes)" for write in writes if not write.ok]
    failed += [f"{command.host} (/engram ss -f)" for command in commands if not command.ok]
    print(
        "PASS: no host wrote memory unasked, through engram_commit or its shell; every host offered"
        " the read and proposal tools" + ("; /engram ss -f typed by the human saved" if commands else "")
        if not failed
        else f"FAIL: {', '.join(failed)}"
    )
    return 1 if failed else 0


def summary(
    findings: list[Finding], shells: list[ShellFinding], commands: list[Any], writes: list[WritesFinding]
) -> str:
    """The closing table: host × check, each cell the result (and, for the shell, the layer)."""
    by_host: dict[str, dict[str, str]] = {}
    for finding in findings:
        by_host.setdefault(finding.host, {})["engram_commit (MCP)"] = (
            "FAIL: written"
            if finding.wrote
            else f"pass ({'host refused' if finding.commit == 'refused' else 'not offered' if finding.commit == 'n' else 'engram refused'})"
        )
        by_host[finding.host]["read + proposal tools"] = "pass" if finding.read_offered else "FAIL"
    for shell in shells:
        by_host.setdefault(shell.host, {})["shell: engram commit TOKEN"] = (
            "FAIL: written"
            if shell.wrote
            else ("ERROR: " + shell.error if shell.error else f"pass ({shell.layer})")
        )
    for write in writes:
        by_host.setdefault(write.host, {})["shell: add, ss -f, verify --accept"] = write.result
    for command in commands:
        by_host.setdefault(command.host, {})["/engram ss -f"] = (
            f"pass (saved: {command.path})" if command.ok else "FAIL: not saved"
        )
    columns = [
        "engram_commit (MCP)",
        "read + proposal tools",
        "shell: engram commit TOKEN",
        "shell: add, ss -f, verify --accept",
        "/engram ss -f",
    ]
    rows = [["host", *columns]] + [
        [host, *(cells.get(column, "-") for column in columns)] for host, cells in by_host.items()
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |" for row in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _probe(chosen: list[Any], runs: Path, timeout: float) -> int:
    found: list[Probe] = []
    for host in chosen:
        executable = install.ensure(host.package, host.version, host.binary)
        for tty in (False, True) if host.name == "codex" else (False,):
            print(f"{host.name}: probing its shell{' (tty)' if tty else ''} …", file=sys.stderr, flush=True)
            seen = probe(
                host, executable, runs / f"{host.name}-probe{'-tty' if tty else ''}", timeout, tty=tty
            )
            seen.host += " (tty: true)" if tty else ""
            found.append(seen)
    for seen in found:
        if seen.error:
            print(f"{seen.host}: {seen.error}")
            continue
        ours = ("PATH", "PWD", "SHLVL", "_", "OLDPWD")
        added = ", ".join(f"{k}={v[:40]}" for k, v in sorted(seen.added.items()) if k not in ours)
        print(
            f"{seen.host} ({seen.shell_tool}): stdin/stdout/stderr a terminal: {seen.isatty}; "
            f"controlling terminal: {seen.dev_tty}"
        )
        print(f"  added: {added or '-'}")
        print(f"  ancestors: {' <- '.join(seen.ancestors) or '-'}")
    return 0 if not any(seen.error for seen in found) else 1


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
