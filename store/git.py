"""One way to ask git something (code references, staleness, history, what a pull brought).

`run_git` starts `git` in a folder with no prompt (stdin closed), no optional locks (a read never
blocks the human's own git), no fsmonitor hook (a cloned repository's config cannot make a read
run a program), and a timeout; it returns stdout as text, or None when git is missing, times
out or fails. Callers treat None as "git has nothing to say".
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Final

TIMEOUT: Final = 10.0
"""Seconds a git call may take before it counts as failed."""


def run_git(cwd: Path, *args: str, timeout: float = TIMEOUT) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", *args],
            cwd=cwd,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None
