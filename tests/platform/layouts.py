"""The module a platform test needs, in today's layout or in the flat one before (ab538aa: store/
and the CLI were single modules), so each test imports on both and fails there by behaviour."""

from __future__ import annotations

import importlib
import os
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any


def first(*names: str) -> ModuleType:
    """The first of `names` that imports. Name the old module first: a module missing from the
    tree under test can still be found through the editable install's mapping of today's
    packages (so `store.code.refs` would import today's code into ab538aa's tree)."""
    for name in names[:-1]:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return importlib.import_module(names[-1])


def engram(argv: list[str]) -> int:
    """`engram argv` in this process (engram_mcp.cli.main, or engram_mcp/cli.py before)."""
    code: int = first("engram_mcp.cli.main", "engram_mcp.cli").main(argv)  # cli.main: no such old module
    return code


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Test",
            "GIT_AUTHOR_EMAIL": "test@example.invalid",
            "GIT_COMMITTER_NAME": "Test",
            "GIT_COMMITTER_EMAIL": "test@example.invalid",
        },
        timeout=60,
        check=True,
    )
    return done.stdout


def memory_file(root: Path, memory_id: str, front: dict[str, Any], body: str = "Body text.") -> Path:
    """`.engram/memory/<id>.md` written by hand (list items in single quotes: a `\\` stays one)."""
    lines = ["---", f"id: {memory_id}"]
    for key, value in {"type": "fact", **front}.items():
        if isinstance(value, list):
            quoted = ("'" + str(v).replace("'", "''") + "'" for v in value)
            lines.append(f"{key}: [{', '.join(quoted)}]")
        else:
            lines.append(f"{key}: {value}")
    path = root / ".engram" / "memory" / f"{memory_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*lines, "---", body, ""]), "utf-8")
    return path
