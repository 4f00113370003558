"""A throwaway user for one host: HOME, ENGRAM_HOME, XDG folders and a git workspace.

Nothing of the real user's environment reaches the host but PATH, locale and terminal: no API
keys, no config folders. engram is this checkout's (`sys.executable`'s folder holds `engram`
and `engram-mcp`), first on PATH.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
ENGRAM = str(BIN / "engram")
KEPT = ("PATH", "LANG", "LC_ALL", "TZ")
SESSION_TEXT = "Decision: we always run make lint before every commit in this repository.\n"
"""Mined by `engram save-session` into one pending ADD proposal."""


@dataclass(frozen=True, slots=True)
class Ran:
    argv: list[str]
    returncode: int | None
    """None when the run was killed at its timeout."""
    stdout: str
    stderr: str


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.engram_home = root / "engram-home"
        self.workspace = root / "workspace"
        for folder in (self.home, self.engram_home, self.workspace):
            folder.mkdir(parents=True, exist_ok=True)
        self.env: dict[str, str] = {name: os.environ[name] for name in KEPT if name in os.environ}
        self.env.update(
            PATH=f"{BIN}{os.pathsep}{self.env.get('PATH', '/usr/bin:/bin')}",
            HOME=str(self.home),
            ENGRAM_HOME=str(self.engram_home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            TMPDIR=str(self._made(root / "tmp")),
            TERM="dumb",
            NO_COLOR="1",
            CI="1",
        )
        git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@localhost"]
        self.run([*git[:1], "init", "-q"])
        self.run([*git, "commit", "-q", "--allow-empty", "-m", "empty"])
        self.engram("init")

    @staticmethod
    def _made(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def run(
        self, argv: list[str], *, env: dict[str, str] | None = None, timeout: float = 60, stdin: str = ""
    ) -> Ran:
        """Run in the workspace, in a process group of its own: at the timeout, or when the
        command returns and leaves children behind (MCP servers), the whole group is killed."""
        proc = subprocess.Popen(
            argv,
            cwd=self.workspace,
            env={**self.env, **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            out, err = proc.communicate()
            code = None
        _kill_group(proc.pid)
        return Ran(argv, code, out, err)

    def engram(self, *args: str, stdin: str = "") -> Ran:
        done = self.run([ENGRAM, *args], stdin=stdin)
        if done.returncode is None or done.returncode > 1:
            raise RuntimeError(f"engram {' '.join(args)} failed: {done.stderr or done.stdout}")
        return done

    def propose(self) -> str:
        """A pending proposal; its approval token."""
        done = self.engram("save-session", "--text", "-", "--json", stdin=SESSION_TEXT)
        envelope: dict[str, Any] = json.loads(done.stdout)
        return str(envelope["data"]["approval_token"])

    def pending(self) -> int:
        done = self.engram("status", "--json")
        return int(json.loads(done.stdout)["data"]["pending_proposals"])

    def memory(self) -> dict[str, str]:
        """Every memory file of both scopes, with its sha256: compared before and after a run."""
        found = {}
        for scope, folder in (
            ("project", self.workspace / ".engram" / "memory"),
            ("user", self.engram_home / "memory"),
        ):
            for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
                if path.is_file():
                    found[f"{scope}:{path.relative_to(folder)}"] = hashlib.sha256(
                        path.read_bytes()
                    ).hexdigest()
        return found


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
