"""The editors' agent terminals (Cursor, VS Code, Windsurf): what engram sees of them and what
doctor says about them.

The rest, and why: docs/design.md, `engram_mcp/hosts/gate/editor_shells.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from engram_mcp.hosts.doctor.findings import Finding, Where, read_jsonc
from engram_mcp.hosts.gate import gate_rules

SHELL_UNASKED: Final = "host.shell_unasked"
"""Informational: a linked editor whose agent terminal engram sees only by its marker, with no
ask rule engram writes."""

EDITORS: Final = {
    "cursor": (
        "CURSOR_AGENT",
        "keep Cursor's auto-run off for `engram` commands (Settings → Agents → auto-run: ask, or "
        "a deny entry `Shell(engram)` in .cursor/cli.json for cursor-agent)",
    ),
    "vscode": (
        "COPILOT_AGENT",
        "run `engram link vscode` again: it adds the rule that makes VS Code's agent ask before any "
        "engram command (chat.tools.terminal.autoApprove); and do not turn on the global auto-approve",
    ),
    "windsurf": (
        "WINDSURF_CASCADE_TERMINAL",
        "add `engram` to Windsurf's windsurf.cascadeCommandsDenyList (Cascade then always asks), and "
        "do not use Turbo mode",
    ),
}
"""Per editor: the marker its agent's terminal sets, and what keeps its agent asking."""

_PROBE: Final = "engram commit TOKEN --approve all"


def notes(linked: set[str], where: Where) -> list[Finding]:
    """One note for each linked editor (`linked`: the targets with an engram entry)."""
    found = []
    for target, (marker, keep_asking) in EDITORS.items():
        if target == "vscode" and any(
            gate_rules.vscode_rule_set(settings) for _, settings in where.vscode_settings()
        ):
            continue
        if target in linked:
            found.append(
                Finding(
                    SHELL_UNASKED,
                    target,
                    f"engram writes no rule that makes {target}'s agent ask before running engram's "
                    f"writes in its terminal; `engram commit` refuses there only while the terminal "
                    f"carries {marker}",
                    keep_asking,
                )
            )
    return found


PROBES: Final = (
    "engram commit TOKEN --approve all",
    "engram commit TOKEN",
    "env engram commit TOKEN",
)
"""How an agent runs engram's commit in a terminal."""
CARRIERS: Final = (
    *(f"{shell} run.sh" for shell in ("bash", "sh", "zsh", "dash", "fish", "ksh", "pwsh", "source", ".")),
    *(f"{shell} -c x" for shell in ("bash", "sh", "zsh")),
    *(f"{runner} run.py" for runner in ("python", "python3", "python3.12", "python3.11", "py", "pypy3")),
    *(f"{runner} -c x" for runner in ("python", "python3", "perl", "ruby", "node")),
    *(f"{runner} run.x" for runner in ("perl", "ruby", "node", "deno run", "bun", "php", "lua", "awk -f")),
    *("npm run x", "npm test", "npx x", "yarn x", "pnpm x", "make x", "just x", "pytest", "tox", "nox"),
    *("uv run x", "poetry run x", "pipx run x", "cargo run", "go run x", "gradle x", "mvn x"),
    *("env ./run", "xargs -a commands", "script -qc ./run", "flock f ./run", "nohup ./run", "sudo ./run"),
    *("time ./run", "nice ./run", "timeout 9 ./run", "setsid ./run", "eval x", "find . -exec ./run ;"),
    *("git x", "ssh localhost x", "docker run x", "tmux new-session x", "screen x", "watch ./run", "./run"),
)
"""Commands that run whatever a file the agent can write says (a script, a package's or a
Makefile's task, a test's conftest, a git alias): an approving rule for one of them runs
engram's writes unasked, whatever rule names engram."""


def vscode_gate(where: Where) -> Iterator[Finding]:
    """host.gate_open for a VS Code auto-approve rule that lets the agent's terminal run
    `engram commit`, or a shell, interpreter or wrapper that would run it, unasked (a `false`
    rule that matches too wins, as in VS Code); the global auto-approve is
    engram_mcp.hosts.gate.audit's finding. A rule Python cannot read as a regular expression
    counts as matching: JavaScript's syntax differs, and a rule engram cannot read is not one
    it may call closed."""
    for path, settings in where.vscode_settings():
        rules = settings.get("chat.tools.terminal.autoApprove")
        if not isinstance(rules, dict):
            continue
        for probe in (*PROBES, *CARRIERS):
            decided = [
                (str(key), _approves(value)) for key, value in rules.items() if _matches(str(key), probe)
            ]
            allowing = next((key for key, approves in decided if approves is True), None)
            if allowing is not None and all(approves is not False for _, approves in decided):
                runs = (
                    "`engram commit`"
                    if probe in PROBES
                    else f"`{probe}` (and so any script, engram's writes too)"
                )
                yield Finding(
                    "host.gate_open",
                    where.show(path),
                    f"the auto-approve rule {allowing[:80]!r} lets VS Code's agent run {runs} unasked, "
                    "writing memory with no human",
                    f'remove it, or add "{_engram_rule()}": false to chat.tools.terminal.autoApprove '
                    "(`engram link vscode` writes it)",
                    f"chat.tools.terminal.autoApprove {allowing[:80]!r}",
                )
                break


def _engram_rule() -> str:
    return gate_rules.VSCODE_RULE.replace("\\", "\\\\")


def cursor_gate(where: Where) -> Iterator[Finding]:
    """host.gate_open for an entry of Cursor's terminal allowlist file that auto-runs
    `engram commit` (entries are command prefixes; the file overrides the in-app list)."""
    path = where.home / ".cursor" / "permissions.json"
    allowed = read_jsonc(path)
    entries = allowed.get("terminalAllowlist") if isinstance(allowed, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, str) and (entry.strip() == "*" or _matches(entry.strip(), _PROBE)):
            yield Finding(
                "host.gate_open",
                where.show(path),
                f"the terminal allowlist entry {entry[:80]!r} lets Cursor's agent run `engram commit` "
                "unasked, writing memory with no human",
                "remove it from terminalAllowlist",
                f"terminalAllowlist {entry[:80]!r}",
            )
            return


def _approves(value: Any) -> bool | None:
    if isinstance(value, dict):
        value = value.get("approve")
    return value if isinstance(value, bool) else None


def _matches(key: str, command: str) -> bool:
    """VS Code's rule forms: `/regex/flags` (JavaScript's: named groups and `[^]` are read as
    Python's; one still unreadable matches), or a command prefix."""
    if len(key) > 1 and key.startswith("/") and key.rfind("/") > 0:
        body, flags = key[1 : key.rfind("/")], key[key.rfind("/") + 1 :]
        body = (
            body.replace("(?<", "(?P<")
            .replace("(?P<=", "(?<=")
            .replace("(?P<!", "(?<!")
            .replace("[^]", "[\\s\\S]")
        )
        try:
            return re.search(body, command, re.IGNORECASE if "i" in flags else 0) is not None
        except re.error:
            return True
    return command == key or command.startswith(key + " ") or (key.endswith(" ") and command.startswith(key))
