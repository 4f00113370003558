"""Attack findings against link / unlink / upgrade / doctor (issue 22 follow-up).

A cloned repository chooses what its host files are: a symbolic link (to a file, or a folder, of
the user's own), a FIFO, a device, a loop, a huge file, an entry whose command or env runs the
clone's code. And a user's own `X.bak` beside a global config is the user's. Each test drives
the CLI in this process (or, where the old behaviour hangs or eats memory, in a child with a
timeout and a memory cap) with real files under a private HOME and ENGRAM_HOME.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import engram_mcp

try:
    from engram_mcp.cli.main import main
except ImportError:  # the layout before the CLI was a package (these tests also run there)
    from engram_mcp.cli import main  # type: ignore[assignment]

SOURCE = str(Path(engram_mcp.__file__).resolve().parent.parent)
"""The folder the child doctor imports engram from: the code this test process runs."""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME and ENGRAM_HOME, this installation's scripts first on PATH, no host
    folder moved by the environment."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ENGRAM_HOME", str(home / ".config" / "engram"))
    monkeypatch.setenv("ENGRAM_VECTORS", "0")
    for name in (
        "XDG_CONFIG_HOME",
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",
        "ENGRAM_WORKSPACE",
        "ENGRAM_READ_ONLY",
    ):
        monkeypatch.delenv(name, raising=False)
    scripts = sysconfig.get_path("scripts")
    monkeypatch.setenv("PATH", os.pathsep.join([scripts, "/usr/bin", "/bin"]))
    return home


@pytest.fixture
def repo(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned repository (a git folder) as the current folder."""
    repo = tmp_path / "clone"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo)
    return repo


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` and its bytes (what must not change)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- 1. a symbolic link in the clone sends writes to the user's own files -------------------------
def test_unlink_does_not_write_through_a_linked_settings_file(
    repo: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """(A) `.claude/settings.json -> ~/.claude/settings.json`: unlink stripped the user's global
    hook and ask rules (link refused the file, unlink never checked)."""
    user = home / ".claude" / "settings.json"
    user.parent.mkdir()
    hook = {"type": "command", "command": "engram hook session-start", "timeout": 30}
    settings = {
        "hooks": {"SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [hook]}]},
        "permissions": {"ask": ["Bash(engram commit *)", "Bash(engram add *)"]},
    }
    user.write_text(json.dumps(settings, indent=2) + "\n", "utf-8")
    before = user.read_bytes()
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").symlink_to(user)
    code, out, err = _run(capsys, "unlink", "claude")
    assert user.read_bytes() == before
    assert code != 0 and "outside this workspace" in out + err


def test_link_and_unlink_refuse_a_linked_claude_folder(
    repo: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """(B) `.claude -> ~/.claude`: link wrote the hook and ask rules into ~/.claude/settings.json,
    unlink deleted ~/.claude/commands/engram.md."""
    assert main(["link", "claude", "--global"]) == 0
    user = home / ".claude"
    kept = _tree(user)
    assert "commands/engram.md" in kept
    (repo / ".claude").symlink_to(user)
    code, out, err = _run(capsys, "link", "claude")
    assert code != 0 and "outside this workspace" in out + err
    assert _tree(user) == kept
    code, out, err = _run(capsys, "unlink", "claude")
    assert code != 0 and "outside this workspace" in out + err
    assert _tree(user) == kept
    assert not (repo / ".mcp.json").exists()


def test_upgrade_does_not_re_pin_through_a_linked_folder(
    repo: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`.cursor -> ~/elsewhere`, whose mcp.json holds an engram entry with a stale pin: upgrade
    re-pinned it there."""
    elsewhere = home / "elsewhere"
    elsewhere.mkdir()
    stale = '{"mcpServers": {"engram": {"command": "/old/venv/bin/engram-mcp", "args": []}}}\n'
    (elsewhere / "mcp.json").write_text(stale, "utf-8")
    (repo / ".cursor").symlink_to(elsewhere)
    code, out, err = _run(capsys, "upgrade")
    assert code != 0 and "outside this workspace" in out + err
    assert (elsewhere / "mcp.json").read_text("utf-8") == stale


# --- 2. a user's own X.bak is not engram's backup -------------------------------------------------
def test_unlink_global_keeps_the_users_own_bak_and_backs_up_under_engram_home(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    codex = home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text('model = "o3"\n', "utf-8")
    (codex / "config.toml.bak").write_text("mine = 1\n", "utf-8")
    assert main(["link", "codex", "--global"]) == 0
    backups = home / ".config" / "engram" / "backups"
    saved = [p.read_text("utf-8") for p in backups.glob("*-config.toml")] if backups.is_dir() else []
    assert saved == ['model = "o3"\n'], "the original is backed up under $ENGRAM_HOME"
    assert main(["unlink", "codex", "--global"]) == 0
    assert (codex / "config.toml").read_text("utf-8") == 'model = "o3"\n'
    assert (codex / "config.toml.bak").read_text("utf-8") == "mine = 1\n"


def test_unlink_global_never_writes_a_users_bak_over_the_command(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    commands = home / ".claude" / "commands"
    commands.mkdir(parents=True)
    mine = "my own notes about engram\n"
    (commands / "engram.md.bak").write_text(mine, "utf-8")
    assert main(["link", "claude", "--global"]) == 0
    assert "engram:command" in (commands / "engram.md").read_text("utf-8")
    assert main(["unlink", "claude", "--global"]) == 0
    assert not (commands / "engram.md").exists(), "engram's command is removed, not replaced"
    assert (commands / "engram.md.bak").read_text("utf-8") == mine


# --- 3. a clone's entry must not run the clone's code -----------------------------------------------
def _planted_script(repo: Path) -> None:
    script = repo / "node_modules" / ".bin" / "engram-mcp"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n# import engram_mcp\nexit 0\n", "utf-8")
    script.chmod(0o755)


def test_a_relative_command_is_not_ours(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cloned `.mcp.json` naming `node_modules/.bin/engram-mcp` (a planted script that names
    engram_mcp) was taken for engram's: doctor said linked, link re-pinned it keeping its env."""
    _planted_script(repo)
    entry = {"command": "node_modules/.bin/engram-mcp", "env": {"PYTHONPATH": ".", "LD_PRELOAD": "./x.so"}}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}), "utf-8")
    code, out, _ = _run(capsys, "doctor", "--json")
    codes = [f["code"] for f in json.loads(out)["data"]["findings"]]
    assert "host.foreign" in codes and code == 1
    before = (repo / ".mcp.json").read_bytes()
    code, out, err = _run(capsys, "link", "claude")
    assert code != 0 and "foreign" in out + err
    assert (repo / ".mcp.json").read_bytes() == before


def test_link_drops_env_that_changes_what_runs(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {
        "PYTHONPATH": ".",
        "LD_PRELOAD": "./x.so",
        "PYTHONSTARTUP": "x.py",
        "DYLD_INSERT_LIBRARIES": "y",
        "ENGRAM_HOME": ".engram-home",  # a clone's folder, with a planted secret, as the user scope
        "ENGRAM_NOW": "0",  # approval tokens that never expire
        "TOKEN": "t",
    }
    entry = {"command": "engram-mcp", "args": [], "env": env}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}), "utf-8")
    code, out, err = _run(capsys, "link", "claude")
    assert code == 0, out + err
    assert "dropped PYTHONPATH" in out and "LD_PRELOAD" in out and "ENGRAM_HOME" in out
    written = json.loads((repo / ".mcp.json").read_text("utf-8"))["mcpServers"]["engram"]
    assert written["env"] == {"TOKEN": "t"}


def test_doctor_flags_an_unsafe_env_on_an_engram_entry(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = {"command": "engram-mcp", "args": [], "env": {"PYTHONPATH": "."}}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}), "utf-8")
    code, out, _ = _run(capsys, "doctor", "--json")
    found = [f for f in json.loads(out)["data"]["findings"] if f["code"] == "host.env_unsafe"]
    assert code == 1 and len(found) == 1
    assert "PYTHONPATH" in found[0]["message"] and "engram link claude" in found[0]["fix"]


# --- 4. a hostile host file: FIFO, device, huge, loop ------------------------------------------------
def _cap_memory() -> None:  # the child: reading /dev/zero or 3 GiB must fail, not take the machine
    limit = 1536 * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _doctor_child(repo: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\ntry:\n from engram_mcp.cli.main import main\nexcept ImportError:\n"
        " from engram_mcp.cli import main\nsys.exit(main(['doctor', '--json']))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": SOURCE},
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_cap_memory,
        check=False,
    )


def _parse_errors(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    data = json.loads(result.stdout)["data"]
    return {f["file"]: f["message"] for f in data["findings"] if f["code"] == "host.parse_error"}


def test_doctor_does_not_wait_on_fifo_host_files(repo: Path) -> None:
    for name in (".mcp.json", ".codex/config.toml", ".claude/settings.json"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(repo / name)
    try:
        result = _doctor_child(repo)
    except subprocess.TimeoutExpired:
        pytest.fail("doctor waited on a FIFO")
    assert result.returncode == 1, result.stderr
    errors = _parse_errors(result)
    assert "not a regular file" in errors["./.mcp.json"]
    assert "not a regular file" in errors["./.codex/config.toml"]


@pytest.mark.parametrize("kind", ["dev-zero", "huge"])
def test_doctor_refuses_a_device_or_a_huge_host_file(repo: Path, kind: str) -> None:
    if kind == "dev-zero":
        (repo / ".mcp.json").symlink_to("/dev/zero")
    else:
        with (repo / ".mcp.json").open("wb") as file:
            file.truncate(3 * 1024 * 1024 * 1024)  # sparse: no disk used
    result = _doctor_child(repo)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    message = _parse_errors(result)["./.mcp.json"]
    assert ("not a regular file" if kind == "dev-zero" else "larger than 16 MiB") in message


def test_a_loop_of_links_is_a_finding_not_a_traceback(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".mcp.json").symlink_to(".mcp.json")
    code, out, _ = _run(capsys, "doctor", "--json")
    assert code == 1
    found = [f for f in json.loads(out)["data"]["findings"] if f["code"] == "host.parse_error"]
    assert [f["file"] for f in found] == ["./.mcp.json"] and "loop" in found[0]["message"]
    code, out, err = _run(capsys, "link", "claude")
    assert code != 0 and "loop of symbolic links" in out + err


# --- 5. the found path in ENGRAM_NOT_ON_PATH -------------------------------------------------------
def test_not_on_path_escapes_and_shows_the_absolute_path(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "bin\x1b]0;PWN\x07"
    folder.mkdir()
    (folder / "engram-mcp").symlink_to("/bin/true")
    scripts = sysconfig.get_path("scripts")
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), scripts, "/usr/bin", "/bin"]))
    code, out, err = _run(capsys, "link", "claude")
    assert code != 0 and "ENGRAM_NOT_ON_PATH" in err
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "bin\\x1b]0;PWN\\x07/engram-mcp" in err
    (repo / "engram-mcp").symlink_to("/bin/true")
    monkeypatch.setenv("PATH", os.pathsep.join([".", scripts, "/usr/bin", "/bin"]))
    code, out, err = _run(capsys, "link", "claude")
    assert code != 0 and f"first, {repo / 'engram-mcp'} (" in err


# --- round two (issue 22) ---------------------------------------------------------------------------
def _doctor_findings(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, str]]]:
    code, out, _ = _run(capsys, "doctor", "--json")
    return code, json.loads(out)["data"]["findings"]


CLONE_ENV = {
    "HOME": "/proc/self/cwd",  # absolute, yet the folder the host starts in: the clone
    "ENGRAM_HOME": "/proc/self/cwd/evil",
    "ENGRAM_WORKSPACE": "/proc/self/cwd/..",
    "PATH": "/proc/self/cwd/bin:/usr/bin",
    "XDG_CONFIG_HOME": ".",  # git reads the clone's git/config as the global config
    "GIT_CONFIG_GLOBAL": "/tmp/x",
    "HOME=./h/": "",  # Node passes it as is, Python then reads HOME="./h/="
    "TOKEN": "t",
}


def test_a_committed_entry_never_sets_homes_path_xdg_or_git(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """1. In a workspace (committed) entry, HOME, ENGRAM_HOME, ENGRAM_WORKSPACE, PATH, XDG_* and
    GIT_* are unsafe whatever their value, and so is a name holding `=`."""
    entry = {"command": "engram-mcp", "args": [], "env": CLONE_ENV}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}), "utf-8")
    code, findings = _doctor_findings(capsys)
    found = [f for f in findings if f["code"] == "host.env_unsafe"]
    assert code == 1 and len(found) == 1
    for name in CLONE_ENV.keys() - {"TOKEN"}:
        assert name in found[0]["message"]
    assert "TOKEN" not in found[0]["message"]
    code, out, err = _run(capsys, "link", "claude")
    assert code == 0, out + err
    assert "dropped" in out and "XDG_CONFIG_HOME" in out
    written = json.loads((repo / ".mcp.json").read_text("utf-8"))["mcpServers"]["engram"]
    assert written["env"] == {"TOKEN": "t"}


def test_a_global_entry_keeps_real_folders_but_not_proc_or_relative_xdg(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """1. A user's own (global) entry may set HOME to a real folder; /proc/…, /dev/… and a
    relative XDG_*/GIT_* are unsafe there too."""
    monkeypatch.chdir(tmp_path)
    env = {
        "HOME": "/proc/self/cwd",
        "ENGRAM_HOME": str(home / "engram"),
        "PATH": "/usr/bin:/dev/shm",
        "XDG_CONFIG_HOME": ".",
        "GIT_CONFIG_GLOBAL": "cfg",
        "XDG_DATA_HOME": str(home / "data"),
    }
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    entry = {"command": "engram-mcp", "args": [], "env": env}
    config.write_text(json.dumps({"mcpServers": {"engram": entry}}), "utf-8")
    code, findings = _doctor_findings(capsys)
    found = [f for f in findings if f["code"] == "host.env_unsafe"]
    assert code == 1 and len(found) == 1
    for name in ("HOME", "PATH", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"):
        assert name in found[0]["message"]
    assert "ENGRAM_HOME" not in found[0]["message"] and "XDG_DATA_HOME" not in found[0]["message"]
    assert main(["link", "cursor", "--global"]) == 0
    written = json.loads(config.read_text("utf-8"))["mcpServers"]["engram"]
    assert written["env"] == {"ENGRAM_HOME": str(home / "engram"), "XDG_DATA_HOME": str(home / "data")}


def test_codex_link_removes_an_engram_env_table_outside_its_block(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """2. `[mcp_servers.engram.env]` after another table lay outside the block link rewrites:
    link said "dropped PYTHONPATH" and kept it, doctor flagged it again (a loop)."""
    assert main(["link", "codex"]) == 0
    config = repo / ".codex" / "config.toml"
    stray = '\n[other]\nx = 1\n\n[mcp_servers.engram.env]\nPYTHONPATH = "."\nLD_PRELOAD = "./x.so"\n'
    config.write_text(config.read_text("utf-8") + stray, "utf-8")
    code, out, err = _run(capsys, "link", "codex")
    assert code == 0, out + err
    assert "dropped PYTHONPATH" in out and "[mcp_servers.engram.env]" in out
    text = config.read_text("utf-8")
    assert "PYTHONPATH" not in text and "LD_PRELOAD" not in text and "[other]\nx = 1\n" in text
    code, findings = _doctor_findings(capsys)
    assert "host.env_unsafe" not in [f["code"] for f in findings]


def test_link_drops_and_doctor_flags_an_env_file_or_cwd(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """3. VS Code's `envFile` (and `cwd`) on engram's entry was kept by link, unseen by doctor:
    `${workspaceFolder}/.env.engram` can set PYTHONPATH or HOME."""
    entry = {
        "type": "stdio",
        "command": "engram-mcp",
        "args": [],
        "envFile": "${workspaceFolder}/.env.engram",
        "cwd": "${workspaceFolder}/evil",
        "timeout": 5,
    }
    (repo / ".vscode").mkdir()
    config = repo / ".vscode" / "mcp.json"
    config.write_text(json.dumps({"servers": {"engram": entry}}), "utf-8")
    code, findings = _doctor_findings(capsys)
    found = [f for f in findings if f["code"] == "host.env_unsafe"]
    assert code == 1 and len(found) == 1
    assert "envFile" in found[0]["message"] and "cwd" in found[0]["message"]
    code, out, err = _run(capsys, "link", "vscode")
    assert code == 0, out + err
    assert "dropped envFile, cwd" in out
    written = json.loads(config.read_text("utf-8"))["servers"]["engram"]
    assert "envFile" not in written and "cwd" not in written and written["timeout"] == 5


def test_a_deep_or_odd_host_file_is_a_finding_not_a_traceback(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """4. A thousand `[` in `.cursor/mcp.json` or `.codex/config.toml` raised RecursionError, an
    opencode agent's `!!float nope` / `!!timestamp nope` front matter ValueError or
    AttributeError: doctor and link died before they reported."""
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "mcp.json").write_text('{"x":' + "[" * 1000, "utf-8")
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_text("a=" + "[" * 1000, "utf-8")
    agents = repo / ".opencode" / "agent"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\nx: !!float nope\n---\nhi\n", "utf-8")
    (agents / "b.md").write_text("---\nx: !!timestamp nope\n---\nhi\n", "utf-8")
    (agents / "c.md").write_text("---\nx: " + "[" * 1000 + "\n---\nhi\n", "utf-8")
    code, findings = _doctor_findings(capsys)
    errors = {f["file"] for f in findings if f["code"] == "host.parse_error"}
    assert code == 1 and errors == {"./.cursor/mcp.json", "./.codex/config.toml"}
    for target in ("cursor", "codex"):
        code, out, err = _run(capsys, "link", target)
        assert code != 0 and "nested" in out + err and "Traceback" not in out + err


@pytest.mark.parametrize(
    ("args", "ours"), [(["-m", "engram_mcp"], False), (["-P", "-m", "engram_mcp"], True)]
)
def test_python_m_engram_mcp_is_ours_only_with_p(
    repo: Path, capsys: pytest.CaptureFixture[str], args: list[str], ours: bool
) -> None:
    """5. `python3 -m engram_mcp` without -P imports the clone's `engram_mcp/` (the host starts it
    in the clone): doctor said "linked"."""
    planted = repo / "engram_mcp"
    planted.mkdir()
    (planted / "__init__.py").write_text("", "utf-8")
    (planted / "__main__.py").write_text("print('the clone runs')\n", "utf-8")
    entry = {"command": sys.executable, "args": args}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}), "utf-8")
    code, out, _ = _run(capsys, "doctor", "--json")
    codes = [f["code"] for f in json.loads(out)["data"]["findings"]]
    assert ("host.foreign" in codes) is not ours
    if not ours:
        assert code == 1


def test_a_stale_created_mark_does_not_delete_the_users_command(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """6. link; the user removes engram's command by hand and writes their own there; link
    --force; unlink: the user's text was gone, with no backup (the old created mark said engram
    had made the file)."""
    assert main(["link", "claude"]) == 0
    command = repo / ".claude" / "commands" / "engram.md"
    command.unlink()
    mine = "my own /engram notes\n"
    command.write_text(mine, "utf-8")
    assert main(["link", "claude", "--force"]) == 0
    assert "engram:command" in command.read_text("utf-8")
    assert main(["unlink", "claude"]) == 0
    assert command.read_text("utf-8") == mine


def test_a_stale_created_mark_does_not_delete_the_users_config(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """6. The same for a host config: link created `.cursor/mcp.json`; the user replaced it with
    their own; link and unlink deleted it, as if engram had made it."""
    assert main(["link", "cursor"]) == 0
    config = repo / ".cursor" / "mcp.json"
    config.unlink()
    mine = '{"mcpServers": {}}\n'
    config.write_text(mine, "utf-8")
    assert main(["link", "cursor"]) == 0
    assert main(["unlink", "cursor"]) == 0
    assert config.read_text("utf-8") == mine


def test_upgrade_keeps_only_links_flags_and_doctor_flags_other_args(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """7. upgrade kept any `--` argument of a clone's entry (`--workspace=evil`,
    `--no-elicitation` survived the re-pin), and doctor was silent."""
    args = ["--workspace=evil", "--no-elicitation", "--always-load", "--read-only"]
    entry = {"command": "/old/venv/bin/engram-mcp", "args": args}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}), "utf-8")
    entry = {"command": "engram-mcp", "args": args}
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}), "utf-8")
    code, findings = _doctor_findings(capsys)
    found = [f for f in findings if f["code"] == "host.args_unsafe"]
    assert code == 1 and sorted(f["file"] for f in found) == ["./.cursor/mcp.json", "./.mcp.json"]
    assert "--workspace=evil" in found[0]["message"] and "--always-load" not in found[0]["message"]
    assert "--read-only" not in found[0]["message"]  # it only takes writes away
    _run(capsys, "upgrade")
    for name in (".mcp.json", ".cursor/mcp.json"):
        written = json.loads((repo / name).read_text("utf-8"))["mcpServers"]["engram"]
        assert written["args"] == ["--always-load", "--read-only"], name
