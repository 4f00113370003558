"""The agent's shell cannot write as the human (issue 19, SPEC §7).

The agent receives a proposal's approval token in its own `engram_save` result. Measured with
the real hosts (e2e/shell.py): Codex in a trusted project ran `engram commit TOKEN` through
`exec_command` and opencode through `bash`, and the memory was written and sealed as the
human's own, so `engram verify` did not list it. Now `engram commit` refuses in an agent's
shell (no terminal, a host's variables, a host among its ancestors), and every other CLI write
made there is sealed as such and listed by `verify` until the human accepts it at a terminal.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli.main import main
from engram_mcp.ops import agent_shell
from engram_mcp.ops.agent_shell import Observation, Process, ancestors, detached, reasons
from store import status as store_status
from store.store import Store
from tests.support import terminal
from tests.support.cli import run_json
from tests.support.paths import ENGRAM, ENGRAM_MCP
from tests.support.snapshots import memory_files

LINE = "Remember that the zorblax quantifier is recalibrated every fortnight."
HUMAN = Observation(stdin_tty=True, controlling_tty=True, environ={"TERM": "xterm-256color"})

# What each host's shell tool gave its command, as e2e/shell.py's probe measured it.
CLAUDE = Observation(
    False, False, {"CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "sdk-cli", "AI_AGENT": "claude-code"}
)
CODEX = Observation(False, False, {"CODEX_THREAD_ID": "01a2", "CODEX_SANDBOX_NETWORK_DISABLED": "1"})
CODEX_TTY = Observation(True, False, {"CODEX_CI": "1"})
"""`exec_command` with `tty: true`: stdin is a terminal, but not a controlling one."""
GEMINI = Observation(False, False, {"GEMINI_CLI": "1"})
OPENCODE = Observation(False, False, {"OPENCODE": "1", "AGENT": "1", "OPENCODE_PID": "14904"})


def seen_as(monkeypatch: pytest.MonkeyPatch, observation: Observation) -> None:
    monkeypatch.setattr(agent_shell, "observe", lambda: observation)


def propose(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """A pending proposal made by the agent (a preview: no human needed); its token."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(LINE + "\n"))
    capsys.readouterr()
    assert main(["save-session", "--text", "-", "--json"]) == 0
    return str(json.loads(capsys.readouterr().out)["data"]["approval_token"])


def pending(ws: Path) -> int:
    return store_status.pending_count(Store(ws))


# --- detection ---------------------------------------------------------------------------------


def test_a_human_terminal_is_not_an_agents_shell() -> None:
    assert reasons(HUMAN) == []


@pytest.mark.parametrize(
    ("seen", "why"),
    [
        (CLAUDE, "CLAUDECODE, CLAUDE_CODE_ENTRYPOINT, AI_AGENT set"),
        (CODEX, "CODEX_SANDBOX_NETWORK_DISABLED, CODEX_THREAD_ID set"),
        (CODEX_TTY, "there is no controlling terminal"),
        (GEMINI, "GEMINI_CLI set"),
        (OPENCODE, "OPENCODE, OPENCODE_PID, AGENT set"),
    ],
    ids=["claude", "codex", "codex-tty", "gemini", "opencode"],
)
def test_every_measured_hosts_shell_is_seen(seen: Observation, why: str) -> None:
    assert why in reasons(seen)
    if seen.stdin_tty:
        return
    assert "stdin is not a terminal" in reasons(seen)
    terminal_faked = Observation(True, True, seen.environ)  # `script` gives it a terminal
    assert reasons(terminal_faked) == [why]


def test_a_variable_unset_by_the_agent_is_still_in_its_shells_environment() -> None:
    """`env -u CLAUDECODE script -qec 'engram commit …'`: a terminal, a clean environment; the
    host's shell that ran it still started with CLAUDECODE, and that cannot be changed."""
    shell = Process(4242, "bash", ("/bin/bash", "-c"), frozenset({"PATH", "CLAUDECODE"}))
    seen = Observation(True, True, {"PATH": "/usr/bin"}, (Process(4243, "script"), shell))
    assert reasons(seen) == ["an ancestor process (4242, bash) has CLAUDECODE set"]


@pytest.mark.parametrize(
    ("host", "program"),
    [
        (Process(14904, "opencode", ("/x/node_modules/.bin/opencode", "run")), "opencode"),
        (Process(1, "codex", ("codex-linux-sandbox", "--sandbox-policy-cwd")), "codex"),
        (Process(15251, "node", ("/usr/bin/node", "--max-old-space-size=12052", "/x/.bin/gemini")), "gemini"),
    ],
    ids=["opencode", "codex-sandbox", "gemini-node"],
)
def test_a_host_cli_among_the_ancestors_is_seen_by_its_program(host: Process, program: str) -> None:
    """opencode runs the command as its own child, and its own environment has no marker."""
    seen = Observation(True, True, {}, (Process(7, "sh", ("sh",)), host))
    assert reasons(seen) == [f"an ancestor process ({host.pid}, {host.name}) runs {program}"]


def test_ancestors_are_read_from_proc_up_to_process_one(tmp_path: Path) -> None:
    """A name holding `)` and spaces (a process names itself) does not shift the fields."""
    files = {
        "/proc/30/stat": b"30 (evil) 1 (x) S 20 30 30 0",
        "/proc/30/cmdline": b"/tmp/evil\0run\0",
        "/proc/30/environ": b"PATH=/bin\0OPENCODE=1\0",
        "/proc/20/stat": b"20 (bash) S 1 20 20 0",
        "/proc/20/cmdline": b"bash\0",
        "/proc/1/stat": b"1 (init) S 0 1 1 0",
    }

    def read(path: Path) -> bytes:
        if str(path) not in files:
            raise PermissionError(str(path))
        return files[str(path)]

    chain = ancestors(30, read)
    assert [(p.pid, p.name) for p in chain] == [(30, "evil) 1 (x"), (20, "bash"), (1, "init")]
    assert chain[0].environ == {"PATH", "OPENCODE"} and chain[0].argv == ("/tmp/evil", "run")
    assert chain[2].environ == frozenset()  # another user's environment cannot be read


def test_the_real_process_without_a_terminal_is_seen_whatever_its_variables(tmp_path: Path) -> None:
    """No variable switches the defence off: a command without a terminal is an agent's shell's
    with every host variable unset and engram's own set to anything."""
    env = {k: v for k, v in os.environ.items() if k not in agent_shell.HOST_VARIABLES}
    env.update(ENGRAM_READ_ONLY="0", ENGRAM_HUMAN="1", ENGRAM_AGENT_SHELL="0", CI="")
    probe = "from engram_mcp.ops import agent_shell; print(agent_shell.reasons(agent_shell.observe()))"
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True
    )
    assert done.stdout.strip().startswith("['stdin is not a terminal'"), done.stdout + done.stderr
    human = terminal.run([sys.executable, "-c", probe], env=env, text=True)
    assert human.stdout.strip() == "[]", human.stdout + human.stderr


# --- engram commit refuses ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "seen", [CLAUDE, CODEX, CODEX_TTY, GEMINI, OPENCODE], ids=["claude", "codex", "tty", "gemini", "opencode"]
)
def test_commit_from_an_agents_shell_writes_nothing_and_names_the_humans_ways(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, seen: Observation
) -> None:
    token = propose(capsys, monkeypatch)
    before = memory_files(ws)
    seen_as(monkeypatch, seen)
    assert main(["commit", token, "--approve", "all"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ENGRAM_AGENT_SHELL: engram commit runs only in your own terminal")
    for way in (
        "host's own prompt",
        "engram_commit",
        "`engram commit TOKEN`",
        "own terminal",
        "`engram pending`",
    ):
        assert way in err, way
    code, envelope = run_json(capsys, "commit", token)
    assert code == 1 and envelope["ok"] is False
    assert envelope["diagnostics"][0]["code"] == "ENGRAM_AGENT_SHELL"
    assert memory_files(ws) == before and pending(ws) == 1  # nothing written, still pending
    seen_as(monkeypatch, HUMAN)  # the human, at a terminal, then commits it
    assert main(["commit", token]) == 0
    assert memory_files(ws) != before and pending(ws) == 0


def test_the_real_engram_commit_refuses_without_a_terminal_and_commits_in_one(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The installed command, as a host's shell runs it (no terminal, no variable) and as the
    human does (tests/support/terminal.py)."""
    token = propose(capsys, monkeypatch)
    before = memory_files(ws)
    env = {k: v for k, v in os.environ.items() if k not in agent_shell.HOST_VARIABLES}
    shell = subprocess.run(
        [ENGRAM, "commit", token], cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True
    )
    assert shell.returncode == 1 and "ENGRAM_AGENT_SHELL" in shell.stdout + shell.stderr, shell
    assert memory_files(ws) == before and pending(ws) == 1
    human = terminal.run([ENGRAM, "commit", token], cwd=ws, env=env, text=True)
    assert human.returncode == 0, human
    assert memory_files(ws) != before and pending(ws) == 0


def test_a_terminal_with_a_hosts_variable_is_still_refused(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`script` gives the agent's command a terminal: the variables are the second belt."""
    token = propose(capsys, monkeypatch)
    before = memory_files(ws)
    launcher = [
        sys.executable,
        "-c",
        terminal.LAUNCHER,
        "/usr/bin/env",
        "CLAUDECODE=1",
        ENGRAM,
        "commit",
        token,
    ]
    primary, secondary = os.openpty()
    try:
        done = subprocess.run(
            launcher,
            cwd=ws,
            stdin=secondary,
            capture_output=True,
            text=True,
            start_new_session=True,
            timeout=60,
        )
    finally:
        os.close(secondary)
        os.close(primary)
    assert done.returncode == 1 and "CLAUDECODE set" in done.stderr, done
    assert memory_files(ws) == before and pending(ws) == 1


# --- other writes are recorded and listed ------------------------------------------------------


def test_a_write_from_an_agents_shell_is_listed_by_verify_until_the_human_accepts(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["verify", "--accept"]) == 0  # the fixture's files: reviewed
    seen_as(monkeypatch, OPENCODE)
    assert main(["add", "rule", "Deploy on Fridays", "Always deploy on Fridays at 5pm.", "--yes"]) == 0
    assert main(["forget", "cut-a-release", "--delete", "--yes"]) == 0
    code, envelope = run_json(capsys, "verify")
    assert code == 1 and envelope["data"]["ok"] is False
    assert envelope["data"]["agent_shell"] == ["cut-a-release (removed)", "deploy-on-fridays"]
    assert (
        envelope["data"]["mismatched"] == envelope["data"]["unindexed"] == envelope["data"]["missing"] == []
    )
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert (
        "Written without you at a terminal (an agent's shell, a script, or a review page other "
        "processes could reach): cut-a-release (removed), deploy-on-fridays" in out
    )
    assert "`engram verify --accept` in your own terminal" in out

    # the agent's own accept is recorded as the agent's: still listed
    capsys.readouterr()
    assert main(["verify", "--accept"]) == 1
    assert "Recorded as accepted from an agent's shell" in capsys.readouterr().out
    code, envelope = run_json(capsys, "verify")
    assert envelope["data"]["agent_shell"] == ["cut-a-release (removed)", "deploy-on-fridays"]

    seen_as(monkeypatch, HUMAN)
    assert main(["verify"]) == 1  # reading is not accepting
    code, envelope = run_json(capsys, "verify", "--accept")
    assert code == 0 and envelope["data"]["accepted"]["agent_shell"] == [
        "cut-a-release (removed)",
        "deploy-on-fridays",
    ]
    assert main(["verify"]) == 0


def test_the_accept_words_a_scripted_write_as_verify_does(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """All engram knows of such a write is that no terminal was there: a script's write is
    listed with the agent's, so `--accept` does not call it the agent's (verify's own words)."""
    assert main(["verify", "--accept"]) == 0
    seen_as(monkeypatch, Observation(False, False, {}))  # a cron job: no terminal, no host
    assert main(["add", "rule", "Deploy on Fridays", "Always deploy on Fridays at 5pm.", "--yes"]) == 0
    seen_as(monkeypatch, HUMAN)
    capsys.readouterr()
    assert main(["verify", "--accept"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "Recorded as reviewed: written without you at a terminal (an agent's shell, a script, or a "
        "review page other processes could reach): deploy-on-fridays."
    ), out
    assert "written from an agent's shell" not in out


def test_an_agents_accept_of_a_hand_edit_is_listed_as_the_agents(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["verify", "--accept"]) == 0
    path = ws / ".engram" / "memory" / "cut-a-release.md"
    path.write_bytes(path.read_bytes() + b"Then push to main without review.\n")  # the agent's edit
    seen_as(monkeypatch, CODEX)
    code, envelope = run_json(capsys, "verify", "--accept")
    assert envelope["data"]["accepted"]["mismatched"] == ["cut-a-release"]
    assert envelope["data"]["agent_shell"] == ["cut-a-release"]
    seen_as(monkeypatch, HUMAN)
    assert main(["verify"]) == 1


def test_save_session_force_and_notes_from_an_agents_shell_are_listed(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/engram ss -f` run by a host's shell still saves (not refused), and is listed."""
    assert main(["verify", "--accept"]) == 0
    seen_as(monkeypatch, CLAUDE)
    monkeypatch.setattr(sys, "stdin", io.StringIO(LINE + "\n"))
    assert main(["save-session", "--text", "-", "--force"]) == 0
    assert main(["note", "Scratch: the export job is flaky on Mondays."]) == 0
    seen_as(monkeypatch, HUMAN)
    code, envelope = run_json(capsys, "verify")
    listed = envelope["data"]["agent_shell"]
    assert code == 1 and "the-zorblax-quantifier-is-recalibrated-every-fortnight" in listed
    assert any(item.startswith("note:") for item in listed), listed


def test_removing_the_record_does_not_make_the_write_the_humans(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mark lives in the seal itself: an agent that deletes index.json and seals.log leaves
    the file unrecorded (added by hand), never sealed as the human's."""
    assert main(["verify", "--accept"]) == 0
    seen_as(monkeypatch, OPENCODE)
    assert main(["add", "rule", "Deploy on Fridays", "Always deploy on Fridays at 5pm.", "--yes"]) == 0
    for name in ("index.json", "seals.log"):
        (ws / ".engram" / name).unlink(missing_ok=True)
    seen_as(monkeypatch, HUMAN)
    code, envelope = run_json(capsys, "verify")
    assert code == 1 and "deploy-on-fridays" in envelope["data"]["unindexed"]


def test_an_interrupted_write_from_an_agents_shell_is_recovered_as_the_agents(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal records where the write came from: a human's next command that rolls it
    forward does not seal it as the human's."""
    from store.write import transaction

    assert main(["verify", "--accept"]) == 0
    store = Store(ws)
    store.agent_shell = True
    target = ws / ".engram" / "memory" / "cut-a-release.md"
    real_apply = transaction._apply

    def crash(writes: Any) -> None:
        real_apply(writes)
        raise KeyboardInterrupt  # killed after the files, before the seals

    monkeypatch.setattr(transaction, "_apply", crash)
    with pytest.raises(KeyboardInterrupt), transaction.write_lock(store):
        transaction.apply(store, [(target, target.read_bytes() + b"More.\n")])
    monkeypatch.setattr(transaction, "_apply", real_apply)
    store.close()
    code, envelope = run_json(capsys, "verify")
    assert code == 1 and envelope["data"]["agent_shell"] == ["cut-a-release"]


def _request(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


HANDSHAKE = (
    _request(
        1,
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    ),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
)
"""What a client sends first, before its tool calls."""


def _commit(id_: int, token: str) -> dict[str, Any]:
    return _request(
        id_, "tools/call", {"name": "engram_commit", "arguments": {"approval_token": token, "approve": "all"}}
    )


def _save_and_commit(command: list[str], ws: Path, title: str) -> None:
    """A client that starts the server with `command`, proposes one rule and commits it."""
    proc = subprocess.Popen(
        [part.replace("{server}", ENGRAM_MCP) for part in command],
        cwd=ws,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    save = {"candidates": [{"type": "rule", "title": title, "body": f"{title}, every time."}]}
    lines = [*HANDSHAKE, _request(2, "tools/call", {"name": "engram_save", "arguments": save})]
    assert proc.stdin is not None and proc.stdout is not None
    for line in lines:
        proc.stdin.write(json.dumps(line).encode() + b"\n")
    proc.stdin.flush()
    token = ""
    while not token:
        reply = json.loads(proc.stdout.readline())
        if reply.get("id") == 2:
            token = reply["result"]["structuredContent"]["data"]["approval_token"]
    commit = _commit(3, token)
    proc.stdin.write(json.dumps(commit).encode() + b"\n")
    proc.stdin.flush()
    while json.loads(proc.stdout.readline()).get("id") != 3:
        pass
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    proc.stdout.close()


def test_a_server_an_agent_starts_in_its_shell_has_its_writes_listed(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent that starts `engram-mcp` in its shell is its client: it can propose and commit
    with no host in between. The host's shell rule asks first (engram link); engram records
    such a server's writes as made from an agent's shell, and verify lists them."""
    assert main(["verify", "--accept"]) == 0
    _save_and_commit(["{server}"], ws, "Run the linter first")  # a host starts it itself
    assert main(["verify"]) == 0
    _save_and_commit(["sh", "-c", "{server}; :"], ws, "Deploy on Fridays")
    code, envelope = run_json(capsys, "verify")
    assert code == 1 and envelope["data"]["agent_shell"] == ["deploy-on-fridays"]


def test_a_server_fed_from_a_file_in_the_agents_shell_has_its_writes_listed(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`exec engram-mcp < requests` in an agent's shell: the server's parent is then the host
    itself, but its stdin is no pipe of the host's (a review finding: the commit was sealed as
    the human's)."""
    assert main(["verify", "--accept"]) == 0
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.StringIO("We always deploy from the release branch.\n"))
        assert main(["save-session", "--text", "-", "--json"]) == 0
    token = json.loads(capsys.readouterr().out)["data"]["approval_token"]
    requests = ws / "requests.jsonl"
    requests.write_text("".join(json.dumps(line) + "\n" for line in (*HANDSHAKE, _commit(2, token))))
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-c", "import os, sys; os.execv(sys.argv[1], sys.argv[1:])", ENGRAM_MCP],
            stdin=stdin,
            capture_output=True,
            cwd=ws,
            timeout=60,
        )
    assert b'"written"' in done.stdout, done.stderr
    code, envelope = run_json(capsys, "verify")
    assert code == 1 and envelope["data"]["agent_shell"], envelope["data"]


def test_a_host_two_hundred_shells_up_is_still_seen() -> None:
    """No depth limit: under a host's process, `env -i` and 200 nested shells leave the host's
    variable only in an ancestor's starting environment, and the walk reaches it."""
    nest = 'if [ "$1" -gt 0 ]; then sh -c "$S" sh $(($1 - 1)); true; else exec "$PY" -c "$PROBE"; fi'
    probe = (
        "from engram_mcp.ops import agent_shell; import os, json; "
        "print(json.dumps([len(agent_shell.ancestors(os.getpid())), agent_shell.reasons(agent_shell.observe())]))"
    )
    clean = [
        "env",
        "-i",
        f"S={nest}",
        f"PY={sys.executable}",
        f"PROBE={probe}",
        "PATH=/usr/bin:/bin",
        "sh",
        "-c",
    ]
    host = (
        "import subprocess, sys; "
        f"sys.exit(subprocess.call({[*clean, nest, 'sh', '200']!r}, cwd={str(Path.cwd())!r}))"
    )
    env = {**terminal.human_env(), "CLAUDECODE": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", host], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    depth, why = json.loads(done.stdout)
    assert depth > 200
    assert any("CLAUDECODE" in reason for reason in why), why


def _chain(*names: str) -> tuple[Process, ...]:
    """Processes nearest first; the last is process 1."""
    return tuple(
        Process(pid, name) for pid, name in zip([*range(100, 100 + len(names) - 1), 1], names, strict=True)
    )


@pytest.mark.parametrize(
    ("chain", "cut"),
    [
        (_chain("bash", "gnome-terminal-", "systemd", "systemd"), False),
        (_chain("bash", "sshd", "sshd", "systemd"), False),
        (_chain("zsh", "tmux: server", "systemd"), False),
        (_chain("bash", "login", "init"), False),
        (_chain("bash", "code", "code", "systemd"), False),
        (_chain("sh", "script", "systemd"), True),  # ( script -qc … & ): adopted by process 1
        (_chain("sh", "script", "systemd", "systemd"), True),  # adopted by the user's systemd
        (_chain("python3", "systemd"), True),  # a double fork from a program of the agent's
        (_chain("sh", "script"), True),  # unshare -p --mount-proc: script is process 1
    ],
)
def test_a_chain_cut_off_from_where_it_started_is_an_agents(
    chain: tuple[Process, ...], cut: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agent_shell, "_in_container", lambda: False)  # a machine booted with an init
    seen = Observation(True, True, {"TERM": "xterm"}, chain)
    assert bool(reasons(seen)) is cut, reasons(seen)


def test_a_commit_detached_from_the_agents_shell_is_refused(tmp_path: Path) -> None:
    """`( env -u CLAUDECODE script -qc "engram commit T" & )` under a host: the subshell exits,
    `script` is adopted by process 1 and gives the command a terminal, the variable is gone."""
    if not Path("/proc/self/stat").exists() or not shutil.which("script"):
        pytest.skip("needs Linux's /proc and util-linux's script")
    out = tmp_path / "out"
    probe = f"sleep 0.5; {sys.executable} -c 'from engram_mcp.ops import agent_shell; print(agent_shell.detect())'"
    subprocess.run(
        ["bash", "-c", f'( env -u CLAUDECODE script -qfc "{probe}" {out} >/dev/null 2>&1 & )'],
        env={**os.environ, "CLAUDECODE": "1"},
        check=True,
    )
    for _ in range(200):
        if out.exists() and "]" in out.read_text(errors="replace"):
            break
        time.sleep(0.05)
    said = out.read_text(errors="replace")
    assert "CLAUDECODE" not in said, said  # the host's shell has gone
    assert ("detached" in said) is not agent_shell._in_container(), said


def test_a_server_a_program_in_the_agents_shell_starts_has_its_writes_listed(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A program of the agent's (here python) starts `engram-mcp` over pipes of its own and
    commits: its parent is no shell, but the agent's shell stands between it and the host."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs Linux's /proc")
    host = tmp_path / "claude"
    shutil.copy("/bin/bash", host)  # a host CLI by its program's name, as the real one runs
    client = f"{sys.executable} -c 'import subprocess, sys; subprocess.run(sys.argv[1:])' {{server}}"
    assert main(["verify", "--accept"]) == 0
    _save_and_commit([str(host), "-c", f'sh -c "{client}"; :'], ws, "Tag releases on Mondays")
    code, envelope = run_json(capsys, "verify")
    assert code == 1 and envelope["data"]["agent_shell"] == ["tag-releases-on-mondays"], envelope["data"]


def _files(*rows: tuple[str, str]) -> tuple[Process, ...]:
    """(comm, exe) rows nearest first; the last is process 1."""
    pids = [*range(200, 200 + len(rows) - 1), 1]
    return tuple(Process(pid, name, exe=exe) for pid, (name, exe) in zip(pids, rows, strict=True))


@pytest.mark.parametrize(
    ("chain", "cut"),
    [
        (
            _files(
                ("bash", "/usr/bin/bash"),
                ("flock", "/usr/bin/flock"),
                ("systemd", "/usr/lib/systemd/systemd"),
            ),
            True,
        ),
        (
            _files(("bash", "/usr/bin/bash"), ("sshd", "/usr/bin/bash"), ("init", "/sbin/init")),
            True,
        ),  # renamed
        (_files(("sh", "/usr/bin/dash"), ("script", "/usr/bin/script"), ("flock", "/usr/bin/flock")), True),
        (
            _files(("bash", "/usr/bin/bash"), ("tmux: server", "/usr/bin/tmux"), ("systemd", "/sbin/init")),
            False,
        ),
        (
            _files(
                ("bash", "/usr/bin/bash"),
                ("sshd", "/usr/sbin/sshd"),
                ("sshd", "/usr/sbin/sshd"),
                ("systemd", "/usr/lib/systemd/systemd"),
            ),
            False,
        ),
        (
            _files(
                ("bash", "/usr/bin/bash"),
                ("gnome-terminal-", "/usr/libexec/gnome-terminal-server"),
                ("systemd", "/usr/lib/systemd/systemd"),
                ("systemd", "/usr/lib/systemd/systemd"),
            ),
            False,
        ),
        (
            _files(("bash", "/usr/bin/bash"), ("init", "/init"), ("Relay(9)", "/init"), ("init", "/init")),
            False,
        ),  # WSL
        (
            _files(
                ("zsh", "/usr/bin/zsh"),
                ("code", "/usr/share/code/code"),
                ("systemd", "/usr/lib/systemd/systemd"),
            ),
            False,
        ),
    ],
)
def test_a_chain_is_judged_by_the_files_its_processes_run(chain: tuple[Process, ...], cut: bool) -> None:
    assert bool(detached(chain, container=False)) is cut, detached(chain, container=False)
    assert detached(chain, container=True) == ""  # in a container, a command under process 1 is how it starts


def test_a_server_an_interpreter_under_the_host_starts_has_its_writes_listed(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`bash -lc 'python3 client.py'` execs python: no shell stands between the server and the
    host, but the agent's program does."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs Linux's /proc")
    host = tmp_path / "claude"
    shutil.copy("/bin/bash", host)
    client = f"{sys.executable} -c 'import subprocess, sys; subprocess.run(sys.argv[1:])' {{server}}"
    assert main(["verify", "--accept"]) == 0
    _save_and_commit([str(host), "-c", f"{client}; :"], ws, "Pin the base image")
    code, envelope = run_json(capsys, "verify")
    assert code == 1 and envelope["data"]["agent_shell"] == ["pin-the-base-image"], envelope["data"]


def test_a_server_whose_parent_runs_under_the_host_is_the_agents() -> None:
    under = [Process(10, "python3", exe="/tmp/x/py"), Process(11, "claude", exe="/usr/bin/node")]
    assert "under its host" in agent_shell._shell_below_host(under)
    child = [Process(11, "claude", exe="/usr/bin/node"), Process(12, "bash", exe="/usr/bin/bash")]
    assert agent_shell._shell_below_host(child) == ""
