"""`engram hook session-start`: what a host's session-start hook injects (SPEC §10): plain text
for Claude Code (and opencode's plugin), which put a hook's stdout in front of the model; for
Codex and Gemini CLI (`--host`) the same text as `hookSpecificOutput.additionalContext`, the JSON
those hosts take as the model's context (Gemini shows plain stdout to the user only).

The rest, and why: docs/design.md, `engram_mcp/ops/hook.py`.
"""

from __future__ import annotations

import os
import select
import sys
from io import StringIO
from pathlib import Path
from typing import IO, Final

import orjson

from engram_mcp.ops.wording import tool_wording
from store.files.workspace import find_workspace
from store.safety import untrusted
from store.store import Store

STDIN_WAIT_SECONDS = 0.2

JSON_HOSTS: Final = frozenset(("codex", "gemini"))
"""Hosts whose SessionStart hook gives the model `hookSpecificOutput.additionalContext` from JSON
on stdout (Gemini CLI 0.61 shows plain stdout to the user only; Codex takes either, but fails a
plain text that looks like JSON)."""
HOSTS: Final = ("claude", *sorted(JSON_HOSTS))


def _hook_input(stream: IO[str]) -> dict[str, object]:
    """The hook's JSON on stdin when there is one; never blocks the session start for long."""
    try:
        if stream.isatty():
            return {}
        ready, _, _ = select.select([stream], [], [], STDIN_WAIT_SECONDS)
        if not ready:
            return {}
        data = orjson.loads(stream.read() or "{}")
    except (OSError, ValueError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def session_start(
    workspace_arg: str | None = None,
    stdin: IO[str] = sys.stdin,
    out: IO[str] = sys.stdout,
    host: str = "claude",
) -> int:
    if host not in JSON_HOSTS:
        return _session_start(workspace_arg, stdin, out)
    text = StringIO()
    _session_start(workspace_arg, stdin, text)
    context = {"hookEventName": "SessionStart", "additionalContext": text.getvalue()}
    try:
        data = orjson.dumps({"hookSpecificOutput": context})
    except TypeError:  # a string orjson refuses (a lone surrogate): the host still gets valid JSON
        context["additionalContext"] = (
            "engram: session-start skipped (unencodable text); run `engram doctor`\n"
        )
        data = orjson.dumps({"hookSpecificOutput": context})
    out.write(untrusted.json_text(data).decode("utf-8") + "\n")
    return 0


def _session_start(workspace_arg: str | None, stdin: IO[str], out: IO[str]) -> int:
    try:
        hook_input = _hook_input(stdin)
        cwd = hook_input.get("cwd")
        start = Path(cwd) if isinstance(cwd, str) and Path(cwd).is_dir() else Path.cwd()
        store = Store(find_workspace(start, workspace_arg), read_only=True, background=False)
        objective = os.environ.get("ENGRAM_SESSION_OBJECTIVE", "")
        result, _ = store.load("", objective=objective, words=tool_wording)  # says why on its first line
        problems = store.config().diagnostics + tuple(
            (p.code, f"{p.file}: {p.message}") for p in store.view().problems[:3]
        )
        if not store.project.root.is_dir():
            problems += (
                (
                    "ENGRAM_EMPTY",
                    f"no .engram/ in {untrusted.line(store.workspace, 1000)}; run `engram init` there",
                ),
            )
        shown = len(result.body_keys) + len(result.card_ids)
        index = store.index_hash()[:12]
        out.write(result.text.rstrip("\n") + "\n")
        for code, message in problems:
            out.write(f"engram note: {code}: {untrusted.line(message, 400)}\n")
        out.write(f"engram: loaded {shown} memories ({result.tokens} tokens) index {index}\n")
    except Exception as exc:  # the host's session start must never fail because of engram
        out.write(
            f"engram: session-start skipped ({type(exc).__name__}: {untrusted.line(exc)}); run `engram doctor`\n"
        )
    return 0
