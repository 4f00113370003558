"""The human's own words from recent host sessions of this workspace (SPEC §7 `--query-level`).

* Claude Code: `~/.claude/projects/<workspace path with / and . as ->/<session>.jsonl`, lines
  `{"type": "user", "message": {"role": "user", "content": str | [{"type": "text", …}]}, "cwd": …}`.
* Codex: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, first a `session_meta` line whose
  `payload.cwd` names the workspace, then `response_item` messages with `role: "user"` and
  `input_text` parts (or `event_msg` `user_message` lines).

Only what the human typed is read (no tool output, no assistant text). Unknown or corrupt lines
are skipped and counted, never fatal.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson


@dataclass(slots=True)
class Mined:
    texts: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    skipped_lines: int = 0


def _claude_dir(workspace: Path, home: Path) -> Path:
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(workspace))


def _codex_sessions(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env.get("CODEX_HOME") or home / ".codex") / "sessions"


def _lines(path: Path, mined: Mined) -> Iterator[dict[str, Any]]:
    try:
        raw_lines = path.read_bytes().splitlines()
    except OSError:
        mined.skipped_lines += 1
        return
    for raw in raw_lines:
        if not raw.strip():
            continue
        try:
            item = orjson.loads(raw)
        except orjson.JSONDecodeError:
            mined.skipped_lines += 1
            continue
        if isinstance(item, dict):
            yield item
        else:
            mined.skipped_lines += 1


_NOT_TYPED: Final = ("<", "[Request interrupted", "Caveat: The messages below")
"""How host-made user messages start: command/context blocks, interruptions, local-command notes."""
_COMMAND_MARK: Final = "engram:command"
"""An expanded `/engram` command (hosts/commands.py): engram's own text, never the human's."""


def _typed(text: str) -> bool:
    return not text.lstrip().startswith(_NOT_TYPED) and _COMMAND_MARK not in text


def _human_text(content: Any, kinds: tuple[str, ...]) -> list[str]:
    if isinstance(content, str):
        found = [content]
    elif isinstance(content, list):
        found = [
            c["text"]
            for c in content
            if isinstance(c, dict) and c.get("type") in kinds and isinstance(c.get("text"), str)
        ]
    else:
        found = []
    return [text for text in found if _typed(text)]


def _claude_session(path: Path, mined: Mined) -> list[str]:
    said: list[str] = []
    for item in _lines(path, mined):
        message = item.get("message")
        if item.get("type") != "user" or item.get("isMeta") or not isinstance(message, dict):
            continue
        said += _human_text(message.get("content"), ("text",))
    return said


def _codex_session(path: Path, workspace: Path, mined: Mined) -> list[str] | None:
    said: list[str] = []
    belongs = False
    for item in _lines(path, mined):
        payload = item.get("payload")
        if not isinstance(payload, dict):
            continue
        kind = item.get("type")
        if kind == "session_meta":
            belongs = str(payload.get("cwd", "")) == str(workspace)
        elif kind == "response_item" and payload.get("type") == "message" and payload.get("role") == "user":
            said += _human_text(payload.get("content"), ("input_text", "text"))
        elif (
            kind == "event_msg"
            and payload.get("type") == "user_message"
            and isinstance(payload.get("message"), str)
            and _typed(payload["message"])
        ):
            said.append(payload["message"])
    # Codex logs each message twice (response_item and event_msg user_message): count it once
    return list(dict.fromkeys(said)) if belongs else None


def recent_sessions(workspace: Path, count: int, env: Mapping[str, str] = os.environ) -> Mined:
    """The human's messages from the `count` most recent sessions of this workspace, both hosts."""
    home = Path(env.get("HOME") or Path.home())
    candidates: list[tuple[float, str, Path]] = []
    claude = _claude_dir(workspace.resolve(), home)
    if claude.is_dir():
        candidates += [(p.stat().st_mtime, "claude", p) for p in claude.glob("*.jsonl")]
    codex = _codex_sessions(home, env)
    if codex.is_dir():
        candidates += [(p.stat().st_mtime, "codex", p) for p in codex.rglob("rollout-*.jsonl")]
    mined = Mined()
    for _, host, path in sorted(candidates, key=lambda c: (-c[0], str(c[2]))):
        if len(mined.sessions) >= count:
            break
        said = (
            _claude_session(path, mined)
            if host == "claude"
            else _codex_session(path, workspace.resolve(), mined)
        )
        if said is None:
            continue
        mined.sessions.append(f"{host}:{path.name}")
        mined.texts.extend(said)
    return mined


def session_candidates(workspace: Path, count: int) -> tuple[list[dict[str, Any]], str]:
    """Candidates mined from the human's lines in the last `count` host sessions, and a summary."""
    from store.mining import mine

    mined = recent_sessions(workspace, count)
    raw, skipped = mine("\n".join(mined.texts))
    note = f"read {len(mined.sessions)} session(s)"
    if mined.skipped_lines:
        note += f", skipped {mined.skipped_lines} unreadable line(s)"
    return raw, note + (f"; {skipped}" if skipped else "")
