"""The `engram` command's entry point.

`engram hook session-start` runs at every session start of a host (the SessionStart hook of
Claude Code, Codex and Gemini CLI; opencode's plugin), so it answers without importing the rest
of the command line: parsing every command's arguments and importing what they need would cost
it more than the hook itself does. Every other command line goes to engram_mcp.cli.run (the
commands live in engram_mcp.cli.commands), imported at that one seam.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from engram_mcp.ops.hook import HOSTS as HOOK_HOSTS
from engram_mcp.ops.hook import session_start

_HOOK = ("hook", "session-start")
_HOOK_OPTIONS = ("--workspace", "--host")


def hook_args(argv: Sequence[str]) -> tuple[bool, str | None, str]:
    """(is it exactly `hook session-start` with at most a `--workspace DIR` and a `--host NAME`
    (one of the hook's hosts), that folder, that host: "claude" when none is named)."""
    words = list(argv)
    found: dict[str, str | None] = dict.fromkeys(_HOOK_OPTIONS)
    for option in _HOOK_OPTIONS:
        for n, word in enumerate(words):
            if word.startswith(f"{option}="):
                found[option], words = word.split("=", 1)[1], words[:n] + words[n + 1 :]
                break
            if word == option and n + 1 < len(words):
                found[option], words = words[n + 1], words[:n] + words[n + 2 :]
                break
    workspace, host = found["--workspace"], found["--host"]
    ok = tuple(words) == _HOOK and workspace != "" and (host is None or host in HOOK_HOSTS)
    return ok, workspace, host or "claude"


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    is_hook, workspace, host = hook_args(args)
    if is_hook:
        try:
            return session_start(workspace, host=host)  # never fails the host's session start
        except KeyboardInterrupt:
            return 130
    from engram_mcp.cli.run import main as run  # seam: the parser and every command; not the hook

    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
