"""The `engram` command's entry point.

`engram hook session-start` runs at every session start of a host (Claude Code's SessionStart
hook), so it answers without importing the rest of the command line: parsing every command's
arguments and importing what they need would cost it more than the hook itself does. Every other
command line goes to engram_mcp.cli.run (the commands live in engram_mcp.cli.commands),
imported at that one seam.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from engram_mcp.ops.hook import session_start

_HOOK = ("hook", "session-start")


def hook_workspace(argv: Sequence[str]) -> tuple[bool, str | None]:
    """(is it exactly `hook session-start` with at most a `--workspace DIR`, that folder)."""
    words, workspace = list(argv), None
    for n, word in enumerate(words):
        if word.startswith("--workspace="):
            workspace, rest = word.split("=", 1)[1], words[:n] + words[n + 1 :]
            break
        if word == "--workspace" and n + 1 < len(words):
            workspace, rest = words[n + 1], words[:n] + words[n + 2 :]
            break
    else:
        rest = words
    return tuple(rest) == _HOOK and workspace != "", workspace


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    is_hook, workspace = hook_workspace(args)
    if is_hook:
        try:
            return session_start(workspace)  # never fails the host's session start
        except KeyboardInterrupt:
            return 130
    from engram_mcp.cli.run import main as run  # seam: the parser and every command; not the hook

    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
