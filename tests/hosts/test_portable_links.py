"""Committed host files are portable (issue 22): a workspace `engram link` names the bare
`engram-mcp` and `engram`, which a teammate's PATH resolves, and writes nothing while PATH here
does not find this installation (ENGRAM_NOT_ON_PATH, naming the login profile for the user's
shell: Codex runs its commands in a login shell, which never reads ~/.bashrc). doctor tells a
bare name PATH does not find from a committed machine path, and names PATH's fix.

Self-contained on purpose (only tests/conftest.py's HOME fixtures, PATH set by each test), so
the file runs unchanged against the code before issue 22 and fails there on behaviour.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
import tomllib
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli.main import main

SCRIPTS = Path(sysconfig.get_path("scripts"))
"""This installation's console scripts: `engram-mcp` and `engram`."""
GIT = shutil.which("git") or "git"
WORKSPACE_HOSTS = ("claude", "codex", "gemini", "cursor", "opencode", "vscode")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def envelope(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, *argv, "--json")
    return code, json.loads(out)


@pytest.fixture
def project(tmp_path: Path, private_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with .engram/, as the current folder."""
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run([GIT, "init", "-q"], cwd=folder, check=True)
    (folder / ".engram").mkdir()
    monkeypatch.chdir(folder)
    return folder


def empty_bin(tmp_path: Path) -> Path:
    folder = tmp_path / "empty-bin"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", os.pathsep.join([str(SCRIPTS), "/usr/bin", "/bin"]))
    return SCRIPTS


@pytest.fixture
def off_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH without this installation's scripts: the state before the shell profile is fixed."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(empty_bin(tmp_path)), "/usr/bin", "/bin"]))
    monkeypatch.setenv("SHELL", "/bin/bash")


def written(folder: Path) -> dict[str, str]:
    """Every file under `folder` but .git/ and .engram/, by relative path."""
    return {
        p.relative_to(folder).as_posix(): p.read_text("utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.relative_to(folder).as_posix().startswith((".git/", ".engram/"))
    }


# --- link ------------------------------------------------------------------------------------------
@pytest.mark.usefixtures("off_path")
def test_link_off_path_writes_nothing_and_names_the_login_profile(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: `link claude` with the venv off PATH wrote this machine's paths, silently."""
    code, out, err = run(capsys, "link", "claude")
    assert code == 1, out + err
    assert written(project) == {}, "nothing is written"
    assert "ENGRAM_NOT_ON_PATH" in err
    assert str(SCRIPTS) in err, "the folder to put on PATH"
    assert "~/.profile" in err and "~/.bashrc" in err, "bash's login profile, and why not .bashrc"
    assert f'export PATH="{SCRIPTS}:$PATH"' in err or "export PATH=" in err
    assert "engram link claude" in err and "--machine-local" in err


@pytest.mark.usefixtures("off_path")
def test_link_off_path_names_bash_profile_when_the_user_has_one(
    project: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bash's login shell reads only ~/.bash_profile when it exists."""
    (private_home / ".bash_profile").write_text("# mine\n", "utf-8")
    code, envelope_ = envelope(capsys, "link", "codex")
    assert code == 1
    [diagnostic] = envelope_["diagnostics"]
    assert diagnostic["code"] == "ENGRAM_NOT_ON_PATH"
    assert "~/.bash_profile" in diagnostic["message"]
    assert not (project / ".codex").exists()


@pytest.mark.parametrize(
    ("shell", "file"), [("/usr/bin/zsh", "~/.zprofile"), ("/usr/bin/fish", "~/.config/fish/config.fish")]
)
@pytest.mark.usefixtures("off_path")
def test_link_off_path_names_the_profile_of_the_users_shell(
    shell: str, file: str, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SHELL", shell)
    code, _, err = run(capsys, "link", "gemini")
    assert code == 1 and "ENGRAM_NOT_ON_PATH" in err
    assert file in err
    assert not (project / ".gemini").exists()


def test_link_refuses_when_path_finds_another_engram_mcp_first(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other-bin"
    other.mkdir()
    for name in ("engram-mcp", "engram"):
        (other / name).write_text("#!/bin/sh\n# from engram_mcp import main\n", "utf-8")
        (other / name).chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(other), str(SCRIPTS), "/usr/bin", "/bin"]))
    code, _, err = run(capsys, "link", "cursor")
    assert code == 1 and "ENGRAM_NOT_ON_PATH" in err
    assert str(other / "engram-mcp") in err and str(SCRIPTS) in err
    assert not (project / ".cursor").exists()


@pytest.mark.parametrize("target", WORKSPACE_HOSTS)
def test_every_workspace_file_names_the_bare_commands(
    target: str, project: Path, private_home: Path, on_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What link writes for the project never names a path of this machine."""
    code, out, err = run(capsys, "link", target)
    assert code == 0, out + err
    files = written(project)
    assert files, "link wrote the project's files"
    for rel, text in files.items():
        assert str(SCRIPTS) not in text, f"{rel} names this machine's {SCRIPTS}"
        assert str(private_home) not in text, f"{rel} names a path under the home folder"
    entry = {
        "claude": lambda: json.loads(files[".mcp.json"])["mcpServers"]["engram"]["command"],
        "codex": lambda: tomllib.loads(files[".codex/config.toml"])["mcp_servers"]["engram"]["command"],
        "gemini": lambda: json.loads(files[".gemini/settings.json"])["mcpServers"]["engram"]["command"],
        "cursor": lambda: json.loads(files[".cursor/mcp.json"])["mcpServers"]["engram"]["command"],
        "opencode": lambda: json.loads(files["opencode.json"])["mcp"]["engram"]["command"][0],
        "vscode": lambda: json.loads(files[".vscode/mcp.json"])["servers"]["engram"]["command"],
    }[target]()
    assert entry == "engram-mcp"


@pytest.mark.usefixtures("off_path")
def test_machine_local_writes_the_path_and_warns_that_it_is_not_portable(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "link", "claude", "--machine-local")
    assert code == 0, out + err
    command = json.loads((project / ".mcp.json").read_text())["mcpServers"]["engram"]["command"]
    assert command == str(SCRIPTS / "engram-mcp")
    assert "ENGRAM_NOT_PORTABLE" in err and "do not commit" in err
    assert err.index("ENGRAM_NOT_PORTABLE") < len(err), "said on stderr"


@pytest.mark.usefixtures("off_path")
def test_a_global_link_off_path_keeps_the_absolute_pin(
    project: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's own config is never committed: it names this installation's path."""
    code, out, err = run(capsys, "link", "cursor", "--global")
    assert code == 0, out + err
    data = json.loads((private_home / ".cursor" / "mcp.json").read_text())
    assert data["mcpServers"]["engram"]["command"] == str(SCRIPTS / "engram-mcp")
    assert "ENGRAM_NOT_ON_PATH" not in err


def test_upgrade_off_path_never_turns_a_bare_name_into_a_path(
    project: Path,
    private_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The project's files are left as they are (ENGRAM_NOT_ON_PATH); the user's own are re-pinned."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(SCRIPTS), "/usr/bin", "/bin"]))
    assert run(capsys, "link", "vscode")[0] == 0
    committed = (project / ".vscode" / "mcp.json").read_bytes()
    user = private_home / ".cursor" / "mcp.json"
    user.parent.mkdir()
    user.write_text('{"mcpServers": {"engram": {"command": "/old/venv/bin/engram-mcp", "args": []}}}\n')
    monkeypatch.setenv("PATH", os.pathsep.join([str(empty_bin(tmp_path)), "/usr/bin", "/bin"]))
    code, out, err = run(capsys, "upgrade")
    assert code == 1 and "ENGRAM_NOT_ON_PATH" in out + err
    assert (project / ".vscode" / "mcp.json").read_bytes() == committed
    assert json.loads(user.read_text())["mcpServers"]["engram"]["command"] == str(SCRIPTS / "engram-mcp")


# --- doctor ----------------------------------------------------------------------------------------
def _findings(env: dict[str, Any]) -> list[dict[str, str]]:
    return [*env["data"]["findings"], *env["data"].get("steps", [])]


def test_doctor_says_a_committed_bare_name_is_not_on_path_and_names_the_profile(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: doctor said "command 'engram-mcp' does not exist. Next: run engram upgrade or
    engram link claude", which writes the absolute paths again."""
    (project / ".mcp.json").write_text('{"mcpServers": {"engram": {"command": "engram-mcp", "args": []}}}\n')
    monkeypatch.setenv("PATH", os.pathsep.join([str(empty_bin(tmp_path)), "/usr/bin", "/bin"]))
    monkeypatch.setenv("SHELL", "/usr/bin/zsh")
    code, env = envelope(capsys, "doctor")
    assert code == 1
    [finding] = [f for f in env["data"]["findings"] if f["file"] == "./.mcp.json"]
    assert "not on PATH" in finding["message"] and str(SCRIPTS) in finding["message"]
    assert "~/.zprofile" in finding["fix"]
    assert "engram link" not in finding["fix"] and "engram upgrade" not in finding["fix"]


def test_doctor_flags_a_committed_machine_path_as_not_portable(
    project: Path, on_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A teammate's machine does not have this path: doctor exits 1 and names the bare-name fix."""
    command = json.dumps(str(SCRIPTS / "engram-mcp"))
    (project / ".mcp.json").write_text(
        f'{{"mcpServers": {{"engram": {{"command": {command}, "args": []}}}}}}\n'
    )
    code, env = envelope(capsys, "doctor")
    assert code == 1
    [finding] = [f for f in env["data"]["findings"] if f["file"] == "./.mcp.json"]
    assert finding["code"] == "host.not_portable"
    assert "engram link claude" in finding["fix"]


def test_doctor_does_not_call_a_command_file_another_version_when_only_the_name_differs(
    project: Path, on_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: every /engram command was "from another engram version or installation" when
    its text named this installation by its absolute path."""
    assert run(capsys, "link", "cursor")[0] == 0
    command = project / ".cursor" / "commands" / "engram.md"
    text = command.read_text()
    assert "Do not run `engram` in the shell" in text
    command.write_text(text.replace("Do not run `engram`", f"Do not run `{SCRIPTS / 'engram'}`"), "utf-8")
    code, env = envelope(capsys, "doctor")
    [finding] = [f for f in _findings(env) if f["file"] == "./.cursor/commands/engram.md"]
    assert "another engram version or installation" not in finding["message"]
    assert str(SCRIPTS / "engram") in finding["message"]
    assert "bare name" in finding["fix"]


# --- where link runs, and what it is asked for -----------------------------------------------------
def test_link_outside_git_warns_before_writing_and_still_links(
    tmp_path: Path,
    private_home: Path,
    on_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "no-git"
    (folder / ".engram").mkdir(parents=True)
    monkeypatch.chdir(folder)
    code, out, err = run(capsys, "link", "cursor")
    assert code == 0, out + err
    assert "git" in err and "git init" in err, "the warning names git init"
    assert (folder / ".cursor" / "mcp.json").is_file()


@pytest.mark.parametrize(
    ("command", "typo", "meant"), [("link", "claud", "claude"), ("unlink", "curser", "cursor")]
)
def test_a_mistyped_target_names_the_closest_one(
    command: str, typo: str, meant: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, command, typo)
    assert code == 2
    assert f"Did you mean '{meant}'?" in err


@pytest.mark.parametrize("target", ["windsurf", "antigravity", "claude-desktop"])
def test_a_global_only_host_in_a_workspace_is_refused_with_the_global_command(
    target: str, project: Path, on_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: `link windsurf` in a workspace printed "skipped" and exited 0."""
    code, env = envelope(capsys, "link", target)
    assert code == 1
    [diagnostic] = env["diagnostics"]
    assert diagnostic["code"] == "ENGRAM_GLOBAL_ONLY"
    assert f"engram link {target} --global" in diagnostic["message"]
    assert written(project) == {}
