"""path_hint: which file puts a folder on PATH for the user's login shell, per shell and per
platform (issue 22: Codex runs its commands in a login shell, which never reads ~/.bashrc), and
whether PATH here finds this installation's scripts."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from engram_mcp.hosts.link import path_hint

SCRIPTS = Path(sysconfig.get_path("scripts"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "me"
    folder.mkdir()
    return folder


def hint(home: Path, shell: str, folder: Path | None = None) -> path_hint.ProfileHint:
    folder = folder or home / ".local" / "share" / "engram-venv" / "bin"
    return path_hint.profile_hint(folder, {"HOME": str(home), "SHELL": shell})


def test_bash_gets_the_profile_and_is_told_bashrc_is_not_read(home: Path) -> None:
    found = hint(home, "/bin/bash")
    assert found.file == "~/.profile"
    assert found.line == 'export PATH="$HOME/.local/share/engram-venv/bin:$PATH"'
    assert "~/.bashrc" in found.why and "login" in found.why
    assert "~/.profile" in found.text() and found.line in found.text()


def test_bash_gets_bash_profile_when_it_exists(home: Path) -> None:
    """bash's login shell reads ~/.bash_profile alone when there is one."""
    (home / ".bash_profile").write_text("# mine\n")
    assert hint(home, "/usr/local/bin/bash").file == "~/.bash_profile"


def test_zsh_gets_zprofile(home: Path) -> None:
    found = hint(home, "/bin/zsh")
    assert found.file == "~/.zprofile" and found.line.startswith("export PATH=")


def test_fish_gets_fish_add_path_in_its_config(home: Path) -> None:
    found = hint(home, "/usr/bin/fish")
    assert found.file == "~/.config/fish/config.fish"
    assert found.line == 'fish_add_path "$HOME/.local/share/engram-venv/bin"'


@pytest.mark.parametrize("shell", ["/bin/sh", "/bin/dash", "/bin/ksh", ""])
def test_other_shells_get_the_posix_profile(home: Path, shell: str) -> None:
    assert hint(home, shell).file == "~/.profile"


def test_a_folder_outside_home_is_named_whole_and_quoted(home: Path, tmp_path: Path) -> None:
    found = hint(home, "/bin/bash", tmp_path / 'odd "dir"' / "bin")
    assert found.line == f'export PATH="{tmp_path}/odd \\"dir\\"/bin:$PATH"'


def test_macos_terminals_are_login_shells_linux_ones_need_a_new_login(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert hint(home, "/bin/zsh").then == "open a new terminal"
    monkeypatch.setattr(sys, "platform", "linux")
    assert "log in again" in hint(home, "/bin/zsh").then and ". ~/.zprofile" in hint(home, "/bin/zsh").then


def test_windows_gets_the_user_path_variable(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    found = hint(home, "", Path("C:/Users/me/venv/Scripts"))
    assert found.file == "your user Path environment variable"
    assert "SetEnvironmentVariable('Path'" in found.line and "'User'" in found.line
    assert "Edit environment variables for your account" in found.why
    assert found.then == "open a new terminal"


def test_the_bash_line_makes_a_login_shell_find_the_folder(home: Path, tmp_path: Path) -> None:
    """The line, put in the file named, is what `bash -l` (Codex's shell) reads."""
    folder = home / ".local" / "share" / "engram-venv" / "bin"
    folder.mkdir(parents=True)
    (folder / "engram-mcp").write_text("#!/bin/sh\n")
    (folder / "engram-mcp").chmod(0o755)
    found = hint(home, "/bin/bash", folder)
    (home / found.file.removeprefix("~/")).write_text(found.line + "\n")
    (home / ".bashrc").write_text("")
    done = subprocess.run(
        ["env", "-i", f"HOME={home}", "bash", "-l", "-c", "command -v engram-mcp"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.stdout.strip() == str(folder / "engram-mcp")


# --- off_path ------------------------------------------------------------------------------------
def test_on_path_is_none(tmp_path: Path) -> None:
    assert path_hint.off_path({"PATH": os.pathsep.join([str(SCRIPTS), "/usr/bin"])}) is None


def test_off_path_names_this_installations_folder(tmp_path: Path) -> None:
    off = path_hint.off_path({"PATH": str(tmp_path)})
    assert off is not None and off.name == "engram-mcp" and off.folder == SCRIPTS and off.found is None
    assert "not on PATH" in off.problem() and str(SCRIPTS) in off.problem()


def test_another_engram_mcp_first_on_path_is_named(tmp_path: Path) -> None:
    (tmp_path / "engram-mcp").write_text("#!/bin/sh\n")
    (tmp_path / "engram-mcp").chmod(0o755)
    off = path_hint.off_path({"PATH": os.pathsep.join([str(tmp_path), str(SCRIPTS)])})
    assert off is not None and off.found == tmp_path / "engram-mcp"
    assert str(tmp_path / "engram-mcp") in off.problem()


def test_no_console_script_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(path_hint, "installed_script", lambda name: None)
    off = path_hint.off_path({"PATH": str(SCRIPTS)})
    assert off is not None and off.folder is None
    assert "pip install" in path_hint.fix(off)
