"""`engram hook session-start`: what the Claude Code SessionStart hook injects (SPEC §10).

Prints the session's tiered load (core first, plus what ENGRAM_SESSION_OBJECTIVE routes to), the
working notes of that objective as cards, and a proof line:

    engram: loaded <n> memories (<tokens> tokens) index <12 hex>

where the index hash is the one `engram status` shows. It never fails the session: on any
error it prints one line saying what went wrong and exits 0.

With no objective set, the task to route by is read from git (issue 12: the hook loaded nothing
on a real project): the branch name as words (`fix/invoice-rounding` → "fix invoice rounding";
`main`, `master`, `develop`, `trunk` and a detached HEAD say nothing) and the subjects of the
last few commits. One line before the proof line says what it routed by. Git gets one bounded
call; a workspace that is not a repository, or a git that fails, routes by nothing, as before.
"""

from __future__ import annotations

import os
import re
import select
import sys
from pathlib import Path
from typing import IO, Final

import orjson

from engram_mcp.ops.wording import tool_wording
from store.files.git import run_git
from store.files.workspace import find_workspace
from store.safety import untrusted
from store.store import Store

STDIN_WAIT_SECONDS = 0.2
GIT_SECONDS: Final = 1.0
COMMITS: Final = 5
"""How many recent commit subjects route the session when no objective is set."""
_QUIET_BRANCHES: Final = frozenset(("main", "master", "develop", "dev", "trunk", "head", "default"))


def git_objective(workspace: Path) -> tuple[str, str]:
    """(task words, what they came from) from the branch and recent commits, read with one git
    call; ("", "") when git has nothing to say."""
    out = run_git(
        workspace,
        "log",
        "--no-color",
        f"-{COMMITS}",
        "--format=%D%x1f%s",
        "HEAD",
        "--",
        timeout=GIT_SECONDS,
    )
    rows = [line.split("\x1f", 1) for line in (out or "").splitlines()]
    subjects = [row[1].strip() for row in rows if len(row) == 2 and row[1].strip()]
    refs = rows[0][0] if rows else ""  # the first commit's decoration: "HEAD -> fix/x, origin/fix/x"
    branch = refs.removeprefix("HEAD -> ").split(",")[0].strip() if refs.startswith("HEAD -> ") else ""
    words = " ".join(re.split(r"[/_.\-]+", branch)).strip() if branch.lower() not in _QUIET_BRANCHES else ""
    parts = [words, *subjects] if words else subjects
    if not parts:
        return "", ""
    source = (f"branch {branch}" if words else "") + (
        (", " if words and subjects else "") + f"{len(subjects)} recent commit subject(s)" if subjects else ""
    )
    return "; ".join(parts), source


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
    workspace_arg: str | None = None, stdin: IO[str] = sys.stdin, out: IO[str] = sys.stdout
) -> int:
    try:
        hook_input = _hook_input(stdin)
        cwd = hook_input.get("cwd")
        start = Path(cwd) if isinstance(cwd, str) and Path(cwd).is_dir() else Path.cwd()
        store = Store(find_workspace(start, workspace_arg), read_only=True, background=False)
        objective = os.environ.get("ENGRAM_SESSION_OBJECTIVE", "")
        task, source = ("", "") if objective.strip() else git_objective(store.workspace)
        result, _ = store.load(task or objective, objective=objective, words=tool_wording)
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
        if source:
            out.write(f"engram: no session objective set; routed by git ({untrusted.line(source)})\n")
        out.write(f"engram: loaded {shown} memories ({result.tokens} tokens) index {index}\n")
    except Exception as exc:  # the host's session start must never fail because of engram
        out.write(
            f"engram: session-start skipped ({type(exc).__name__}: {untrusted.line(exc)}); run `engram doctor`\n"
        )
    return 0
