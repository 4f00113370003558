"""Issue 22's attack findings in the store: a symbolic link loop where engram looks for its
folders (`.engram -> .engram`, `memory -> memory`, `working -> working`, or ENGRAM_HOME naming a
self-linked path) is a folder engram refuses, said with a code and the fix, never a traceback
(Path.resolve raises RuntimeError on a loop on Python 3.11, OSError later; os.scandir ELOOP).

Each case drives `engram list`, `status` and `doctor` in-process through `main` on a scratch git
repository, as the attacker's clone would be met."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from engram_mcp.cli.main import main
from tests.support.cli import run


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "clone"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, capture_output=True, timeout=60)
    monkeypatch.chdir(root)
    return root


def _engram_loop(repo: Path) -> str:
    os.symlink(".engram", repo / ".engram")  # before any `engram init`
    return "ENGRAM_UNSAFE_PATH"


def _folder_loop(name: str) -> Callable[[Path], str]:
    def plant(repo: Path) -> str:
        assert main(["init"]) == 0
        folder = repo / ".engram" / name
        folder.rmdir()
        os.symlink(name, folder)
        return "ENGRAM_UNSAFE_PATH"

    return plant


LOOPS = {
    "engram-dir": _engram_loop,
    "memory-dir": _folder_loop("memory"),
    "working-dir": _folder_loop("working"),
}


@pytest.mark.parametrize("command", ["list", "status", "doctor"])
@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_symlink_loop_in_the_workspace_is_refused_without_a_traceback(
    repo: Path, capsys: pytest.CaptureFixture[str], loop: str, command: str
) -> None:
    LOOPS[loop](repo)
    code, out, err = run(capsys, command)  # raised RuntimeError: Symlink loop before the fix
    assert code in (0, 1), (out, err)
    assert "Traceback" not in out + err
    said = out + err
    if command == "list":
        assert code == 0 and "No memories yet" in out, said
    else:  # status names the refused folder; doctor reports it as a finding
        assert "ENGRAM_UNSAFE_PATH" in said or "memory.skipped" in said, said
        assert "symbolic link" in said, said


def test_a_loop_folder_is_refused_for_writes_with_unsafe_path(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A write through the looped `.engram` answers ENGRAM_UNSAFE_PATH and writes nothing."""
    _engram_loop(repo)
    code, out, err = run(capsys, "add", "fact", "Use ruff", "Lint with ruff.", "--yes")
    assert code != 0, out
    assert "ENGRAM_UNSAFE_PATH" in err, err
    assert (repo / ".engram").is_symlink()


@pytest.mark.parametrize("command", ["list", "status", "doctor"])
def test_engram_home_set_to_a_self_linked_path_is_not_a_traceback(
    repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    """doctor says home.unusable; list and status read the project and say once that the home
    cannot be used (before the fix catalog._scan raised ELOOP from os.scandir; issue 23: one
    notice for the home, not one per folder of it)."""
    assert main(["init"]) == 0
    looped = tmp_path / "selflink"
    os.symlink(looped, looped)
    monkeypatch.setenv("ENGRAM_HOME", str(looped))
    code, out, err = run(capsys, command)
    assert code in (0, 1), (out, err)
    assert "Traceback" not in out + err
    if command == "doctor":
        assert "home.unusable" in out + err, out + err
    if command == "status":
        assert f"$ENGRAM_HOME ({looped}) cannot be examined" in out + err, out + err
        assert "$ENGRAM_HOME/memory" not in out + err, out + err
