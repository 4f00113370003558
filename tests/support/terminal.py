"""`engram` in a terminal of its own: the human path of a CLI write, for subprocess tests.

A CLI write run without a terminal is an agent's shell's (SPEC §7, engram_mcp/ops/agent_shell.py):
`engram commit` refuses and every other write is listed by `verify` for review. A test that
means the human's own command runs it here instead: stdin is a pseudo-terminal that is the
process's controlling terminal (its own session, `TIOCSCTTY`, then `exec`, so the `Popen` is
engram itself: its pid, its exit code, a SIGKILL reaches it), stdout and stderr stay pipes, and
no host's shell variable is passed on. Its ancestors are the test's: a suite run from an
agent's shell is seen as one.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from engram_mcp.ops.agent_shell import HOST_VARIABLES

LAUNCHER = (
    "import fcntl, os, sys, termios\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


def human_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) without any host's shell variable."""
    return {k: v for k, v in (os.environ if env is None else env).items() if k not in HOST_VARIABLES}


def popen(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, **kwargs: Any
) -> subprocess.Popen[Any]:
    """`subprocess.Popen(argv, …)` with a controlling terminal as stdin (no `stdin=`: input
    cannot be piped; a command that reads stdin gets the terminal, which the caller never
    writes to)."""
    primary, secondary = os.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, *argv],
            stdin=secondary,
            env=human_env(env),
            start_new_session=True,
            **kwargs,
        )
    finally:
        os.close(secondary)
    weakref.finalize(proc, os.close, primary)  # the terminal lives as long as the Popen
    return proc


def run(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 60, **kwargs: Any
) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(argv, capture_output=True, …)` in a terminal of its own."""
    proc = popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


class Terminal(io.StringIO):
    """stdin as a terminal the human answers from, for in-process commands that ask y/N."""

    def isatty(self) -> bool:
        return True
