"""Several writers on one workspace at once, as the process suites start them.

`start_writers` spawns `python -c SCRIPT` processes that print "ready" and then wait for a go
file, so that every interpreter has started before any of them writes and all begin at the same
instant; `finish` collects the one JSON line each prints. `save_sessions` is the human's own
`engram save-session --force`, run meanwhile in a terminal of its own (SPEC §7).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support import terminal
from tests.support.paths import ENGRAM, REPO

STRESS_SCALE = max(1, int(os.environ.get("ENGRAM_STRESS_SCALE") or 1))
"""Long mode: `ENGRAM_STRESS_SCALE=10 make test` writes ten times as many memories."""


def words(rng: random.Random, n: int) -> str:
    """`n` random nine-letter words: text no fixture memory and no other writer shares."""
    return " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(9)) for _ in range(n))


def start_writers(script: str, argvs: list[list[str]], env: dict[str, str]) -> list[subprocess.Popen[str]]:
    """One `python -c script *argv` per argv, in the checkout; returns once each said "ready"."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, *argv],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in argvs
    ]
    for proc in procs:  # every interpreter has started and waits on the go file
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return procs


def finish(procs: list[subprocess.Popen[str]], timeout: float) -> list[dict[str, Any]]:
    """Each writer's exit (0, or its stderr in the failure) and the JSON line it printed."""
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    return results


def save_sessions(
    workspace: Path, tmp_path: Path, rng: random.Random, *, runs: int, lines: int, env: dict[str, str]
) -> list[str]:
    """`engram save-session --text FILE --force`, `runs` times with `lines` knowledge lines
    each, never ENGRAM_BUSY: the titles it wrote."""
    titles: list[str] = []
    for run in range(runs):
        said = [f"Remember that {words(rng, 6)}." for _ in range(lines)]
        text = tmp_path / f"session-{run}.txt"
        text.write_text("Some chat first.\n" + "".join(f"- {line}\n" for line in said))
        proc = terminal.run(
            [ENGRAM, "save-session", "--text", str(text), "--force"],
            cwd=workspace,
            env=env,
            text=True,
            timeout=60,
        )
        assert "ENGRAM_BUSY" not in proc.stderr, "the CLI starved into ENGRAM_BUSY"
        assert proc.returncode == 0, proc.stderr
        assert f"Saved {lines} memor" in proc.stdout and "not saved" not in proc.stdout.lower(), proc.stdout
        titles += [line.removeprefix("Remember that ").rstrip(".").capitalize() for line in said]
    return titles
