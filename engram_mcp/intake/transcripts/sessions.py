"""The human's own words from recent host sessions of this workspace (SPEC §7 `--query-level`).

`recent_sessions` reads the newest sessions of one host (`host`, what `/engram ss -f` passes
with `--host`) or, for the human at a terminal, of every host engram can read, newest first:
Claude Code, Codex, Gemini CLI and opencode (where each keeps them, and how the human's text
is told from the host's and the model's: `claude_codex`). Only what the human typed is
kept: never compact summaries, sub-agent prompts, tool results, command output, injected
context or assistant text. Every file is hostile input (`bounded`): bounded, never
through a link out of the host's folder; unreadable lines are skipped and counted.

The summary says which host and which session file each read came from and, when there was
none, every folder engram looked in and what to do instead; paths are shown under `~/` and
through `store.safety.untrusted.line`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from engram_mcp.intake.transcripts import HOSTS, INSTEAD, gemini, opencode
from engram_mcp.intake.transcripts import claude_codex as formats
from engram_mcp.intake.transcripts.bounded import Skips, shown
from store.errors import NotFound
from store.plurals import count
from store.propose.mining import mine
from store.safety.untrusted import line

MAX_TEXT: Final = 8 << 20
"""Characters of the human's text kept from all sessions together."""
SHOWN_SESSIONS: Final = 5
"""Session files named in the summary; the rest are counted."""


@dataclass(slots=True)
class Mined:
    texts: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    """Each session read: the host's name and the file (`~/…`), raw (escape before showing)."""
    skipped_lines: int = 0
    looked: list[str] = field(default_factory=list)
    """Every folder or file engram looked in, with the host's name, raw."""


def _folders(workspace: Path) -> tuple[str, ...]:
    """The folders a host may have keyed this workspace's sessions by: the workspace as given
    and resolved, and the current folder when it lies inside it (a host started in `src/`
    keys its sessions by `src/`, and `/engram` runs engram from there)."""
    folders = [workspace.absolute(), workspace.resolve()]
    try:
        here = Path.cwd()
    except OSError:  # the current folder was removed
        here = folders[0]
    if here.resolve().is_relative_to(folders[1]):
        folders += [here, here.resolve()]
    return tuple(dict.fromkeys(map(str, folders)))


def recent_sessions(
    workspace: Path, count: int, env: Mapping[str, str] = os.environ, host: str | None = None
) -> Mined:
    """The human's messages from the `count` most recent sessions of this workspace."""
    readers = {
        "claude": formats.claude_said,
        "codex": formats.codex_said,
        "gemini": gemini.gemini_said,
        "opencode": opencode.opencode_said,
    }

    home = Path(env.get("HOME") or Path.home())
    ctx = formats.Context(_folders(workspace), home, env)
    skips = Skips()
    hosts = [host] if host else list(HOSTS)
    found: list[formats.Session] = []
    mined = Mined()
    for name in hosts:
        if name == "claude":
            sessions, looked = formats.claude_sessions(ctx)
        elif name == "codex":
            sessions, looked = formats.codex_sessions(ctx)
        elif name == "gemini":
            sessions, looked = gemini.gemini_sessions(ctx, skips)
        else:
            sessions, looked = opencode.opencode_sessions(ctx, count, skips)
        found += sessions
        mined.looked += [f"{_place(path, home)} ({HOSTS[name]})" for path in looked]
    size = 0
    for session in sorted(found, key=lambda s: (-s.mtime, str(s.shown), s.key)):
        if len(mined.sessions) >= count or size > MAX_TEXT:
            break
        said = readers[session.host](session, ctx, skips)
        if said is None:
            continue  # another workspace's, or a sub-agent's
        where = shown(session.shown, home) + (f" session {session.key}" if session.key else "")
        mined.sessions.append(f"{HOSTS[session.host]} {where}")
        for text in said:
            size += len(text)
            mined.texts.append(text)
    mined.skipped_lines = skips.lines
    return mined


def _place(path: Path, home: Path) -> str:
    return shown(path, home) + ("" if path.suffix in (".db", ".json") else "/")


def nothing_found(mined: Mined, host: str | None) -> str:
    """Where engram looked for a session of this workspace, and what to do instead."""
    what = f"no {HOSTS[host]} session" if host else "no host session"
    places = ", ".join(line(place) for place in mined.looked)
    return f"{what} of this workspace: engram looked in {places}. Instead, {INSTEAD}"


def summary(mined: Mined) -> str:
    """Which sessions were read: the host and the file of each."""
    names = [line(name) for name in mined.sessions[:SHOWN_SESSIONS]]
    if len(mined.sessions) > SHOWN_SESSIONS:
        names.append(f"and {len(mined.sessions) - SHOWN_SESSIONS} more")
    note = f"read {count(len(mined.sessions), 'session')} ({', '.join(names)})"
    if mined.skipped_lines:
        note += f", skipped {count(mined.skipped_lines, 'unreadable line')}"
    return note


def session_candidates(
    workspace: Path, count: int, host: str | None = None
) -> tuple[list[dict[str, Any]], str]:
    """Candidates mined from the human's lines in the last `count` host sessions, and a summary.

    Raises:
        NotFound: no session of `host` (or of any host) for this workspace was found; the
            message says where engram looked.
    """
    mined = recent_sessions(workspace, count, host=host)
    if not mined.sessions:
        raise NotFound(nothing_found(mined, host))
    raw, skipped = mine("\n".join(mined.texts))
    note = summary(mined)
    return raw, note + (f"; {skipped}" if skipped else "")
