"""Host session files for save-session: bounded reads (`bounded`) and each host's format
(`claude_codex`, `gemini`, `opencode`), read by `sessions`.

The names below are what the tool schema and the CLI's `--host` need; they live here, apart
from the readers, so that listing the tools never imports a session reader.
"""

from __future__ import annotations

from typing import Final

from store.safety.untrusted import line

HOSTS: Final = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "opencode": "opencode"}
"""`--host` names and how the hosts call themselves."""
UNREADABLE: Final = ("cursor", "vscode", "windsurf", "antigravity")
"""Hosts engram links whose sessions it cannot read: nothing it can open keeps them."""
INSTEAD: Final = (
    "save the session's text with `engram save-session --text FILE` (or - for stdin), or ask the "
    "agent in the host to call the engram_save_session tool with the session's knowledge lines"
)


def host_problem(host: str) -> str | None:
    """Why `--host host` cannot be used, or None when engram reads that host's sessions."""
    if host in HOSTS:
        return None
    choices = ", ".join(HOSTS)
    if host.lower() in UNREADABLE:
        return f"engram cannot read {line(host, 40)}'s sessions; {INSTEAD}. --host takes {choices}"
    return f"--host takes one of {choices}, not {line(host, 40)!r}"
