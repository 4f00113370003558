"""The page's secrets exist only behind a shut door: a process of the same user that opened
`engram ui`'s /proc/PID/mem at the earliest moment (Linux checks ptrace access at the open, not
on each read) reads the launch process's memory for its whole life, so the URL's key, the
cookie, the CSRF secret and the approval codes are made in a child forked after the door was
shut, whose memory no descriptor reaches (engram_mcp.ui.serve.sealed).

The attack (tests/support/mem_attack.py) runs as the page's user without CAP_SYS_PTRACE (as
root here, that capability is dropped from its bounding set: root with it reads any memory).
Its own reads are checked to work: it sees its target's command line in the memory it read."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.terminal import human_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/PID/mem is Linux's")

ATTACK = Path(__file__).resolve().parents[1] / "support" / "mem_attack.py"
PR_CAPBSET_DROP = 24
CAP_SYS_PTRACE = 19


def _without_ptrace_capability() -> None:
    if os.geteuid() == 0:
        ctypes.CDLL(None, use_errno=True).prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0)


def test_a_descriptor_opened_at_launch_reads_no_secret(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "page-home"
    workspace.mkdir()
    home.mkdir()
    env = {**human_env(), "HOME": str(home), "ENGRAM_HOME": str(home / ".engram")}
    ran = subprocess.run(
        [sys.executable, str(ATTACK), str(workspace)],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=90,
        preexec_fn=_without_ptrace_capability,
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout)
    assert seen["opened_early"] and seen["code"], seen
    assert seen["sees_its_own_command"], "the attack read nothing: it would prove nothing"
    assert not seen["code_found"], "the approval code was read through a descriptor opened at launch"
    assert not seen["key_found"], "the URL's key was read through a descriptor opened at launch"
    assert seen["children"] == 1 and seen["child_mem"] == "refused", seen
    assert seen["exit"] == 143, seen


def test_doctor_says_where_the_page_memory_stays_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off Linux, and on Linux without Yama or with ptrace_scope 0: a process that may attach
    to the user's others can write the command's memory while it starts and undo the door."""
    from engram_mcp.hosts.doctor import health

    env = {"HOME": str(tmp_path), "ENGRAM_HOME": str(tmp_path / "eh")}
    scope = tmp_path / "ptrace_scope"
    monkeypatch.setattr(health, "PTRACE_SCOPE", scope)

    def said() -> list[str]:
        return [f.message for f in health.findings(None, env) if f.code == "ui.memory_readable"]

    monkeypatch.setattr(health.sys, "platform", "darwin")
    assert len(said()) == 1 and "darwin" in said()[0]
    monkeypatch.setattr(health.sys, "platform", "linux")
    assert said() and "no Yama" in said()[0]
    scope.write_text("0\n")
    assert said() and "ptrace_scope is 0" in said()[0]
    scope.write_text("1\n")
    assert said() == []


def test_the_page_ends_with_the_command_even_when_it_is_killed(tmp_path: Path) -> None:
    """SIGKILL cannot be passed on, so the child asks the kernel for SIGTERM when its parent
    dies. Under a shell that leads the terminal's session, as in a real terminal (a dead
    session leader would hang the child up anyway)."""
    import signal
    import time

    from tests.support import terminal

    env = {**human_env(), "HOME": str(tmp_path), "ENGRAM_HOME": str(tmp_path / "eh")}
    shell = terminal.popen(
        ["/bin/sh", "-c", f"{sys.executable} -m engram_mcp.cli ui --no-open; sleep 30"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert shell.stdout is not None and b"approval code" in shell.stdout.readline() + shell.stdout.readline()
    [command] = _children(shell.pid)
    [page] = _children(int(command))
    os.kill(int(command), signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _running(page) and time.monotonic() < deadline:
        time.sleep(0.1)
    running = _running(page)
    if running:
        os.kill(int(page), signal.SIGKILL)
    shell.kill()
    shell.wait(30)
    shell.stdout.close()
    if shell.stderr is not None:
        shell.stderr.close()
    assert not running, "the page outlived its command"


def _children(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()


def _running(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False
