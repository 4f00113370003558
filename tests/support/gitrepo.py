"""A throw-away git repository for tests (identity and config kept inside the test's HOME)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.files import write

ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, **ENV, **(env or {})},
        timeout=60,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done.stdout


def init(repo: Path) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    return repo


def commit_all(repo: Path, message: str, *, when: str | None = None) -> None:
    git(repo, "add", "-A")
    env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else None
    git(repo, "commit", "-q", "-m", message, env=env)


def memory(repo: Path, memory_id: str, title: str, body: str, **fields: object) -> Path:
    """A hand-written memory file in the repo's `.engram/memory/`."""
    lines = [f"id: {memory_id}", "type: fact", f"title: {title}"]
    for key, value in fields.items():
        if isinstance(value, list):
            lines.append(
                f"{key}: [{', '.join(repr(v) if any(c in str(v) for c in '*#') else str(v) for v in value)}]"
            )
        else:
            lines.append(f"{key}: {str(value).lower() if isinstance(value, bool) else value}")
    text = "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"
    return write(repo / ".engram" / "memory" / f"{memory_id}.md", text)
