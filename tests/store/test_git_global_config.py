"""A host entry's env can carry HOME or XDG_CONFIG_HOME pointing into the clone, whose
committed `git/config` or `.gitconfig` would then be git's global config: its trace2 targets
(which no `-c` overrides) append text to any file on every engram git call. engram's git calls
read no global config from inside the working tree and never write a trace."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from store.files.git import run_git


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "a.py").write_text("A = 1\n")
    subprocess.run(["git", "add", "a.py"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "a"],
        cwd=root,
        check=True,
    )
    return root


@pytest.mark.parametrize(
    ("variable", "config"),
    [("XDG_CONFIG_HOME", "git/config"), ("HOME", ".gitconfig")],
)
def test_a_global_config_inside_the_clone_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, config: str
) -> None:
    root = _repo(tmp_path)
    trace = tmp_path / "trace-target"
    planted = root / config
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text(f"[trace2]\n\teventTarget = {trace}\n[alias]\n\tls-files = !touch {trace}\n")
    monkeypatch.setenv(variable, str(root))
    assert run_git(root, "ls-files") == "a.py\n"
    assert not trace.exists()


def test_the_same_value_spelled_through_proc_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path)
    trace = tmp_path / "trace-target"
    (root / "git").mkdir()
    (root / "git" / "config").write_text(f"[trace2]\n\teventTarget = {trace}\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv("XDG_CONFIG_HOME", "/proc/self/cwd")
    assert run_git(root, "ls-files") == "a.py\n"
    assert not trace.exists()


def test_the_users_own_global_config_outside_the_clone_still_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a global config inside the working tree is refused: the user's own is read."""
    root = _repo(tmp_path)
    home = tmp_path / "user"
    home.mkdir()
    (home / ".gitconfig").write_text("[core]\n\tquotePath = false\n")
    monkeypatch.setenv("HOME", str(home))
    (root / "é.py").write_text("B = 1\n")
    subprocess.run(["git", "add", "é.py"], cwd=root, check=True)
    assert run_git(root, "ls-files") == "a.py\né.py\n"
