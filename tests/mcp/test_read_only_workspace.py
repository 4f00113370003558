"""A write in a workspace the file system will not let engram write (a sandbox's read-only
mount) ends in one ENGRAM_READ_ONLY line naming the cause and the fix, for every write command
(issue 19: it ended in a 40-line traceback from store/lock.py)."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli.main import main
from tests.support.gitrepo import commit_all, init, memory
from tests.support.store_helpers import write_memory

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


@pytest.fixture
def read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with one memory, mounted read-only (every write under it refused)."""
    root = init(tmp_path / "repo")
    memory(root, "use-uv", "Use uv", "Use uv for Python environments.")
    write_memory(root, "flaky-test", title="The flaky test", tier="working", valid_until="2999-01-01")
    commit_all(root, "seed")
    monkeypatch.chdir(root)
    inside = str(root.resolve()) + os.sep
    real_open, real_mkdir = os.open, os.mkdir

    def _refuse(path: Any) -> None:
        if os.path.abspath(os.fspath(path)).startswith(inside):
            raise OSError(errno.EROFS, "Read-only file system", os.fspath(path))

    def fake_open(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        if flags & _WRITE_FLAGS:
            _refuse(path)
        return real_open(path, flags, *args, **kw)

    def fake_mkdir(path: Any, *args: Any, **kw: Any) -> None:
        _refuse(path)
        real_mkdir(path, *args, **kw)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)
    return root


@pytest.mark.parametrize(
    "argv",
    [
        ["add", "rule", "Run make lint", "Run make lint before every commit.", "--yes"],
        ["forget", "use-uv"],
        ["verify", "--accept"],
        ["save-session", "--text", "-", "--force"],
        ["note", "The flaky test is in tests/test_api.py"],
        ["restore", "use-uv"],
        ["promote", "flaky-test"],
        ["gc"],
    ],
)
def test_every_write_command_gives_one_read_only_line(
    read_only: Path, argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("We always run make lint before a commit.\n"))
    before = sorted(p.relative_to(read_only) for p in read_only.rglob("*") if ".git" not in p.parts)
    code = main(argv)
    err = capsys.readouterr().err
    after = sorted(p.relative_to(read_only) for p in read_only.rglob("*") if ".git" not in p.parts)
    assert after == before
    assert code == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("ENGRAM_READ_ONLY: ") and "Traceback" not in err
    assert "sandbox" in lines[0] and "own terminal" in lines[0] and "nothing was written" in lines[0]


@pytest.mark.parametrize(
    "argv",
    [["search", "uv"], ["load", "uv"], ["list"], ["status"], ["stale"], ["verify"], ["show", "use-uv"]],
)
def test_reads_work_in_a_read_only_workspace(
    read_only: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A fresh clone has no index.json (it is gitignored): a read builds it in memory and goes
    on when it cannot write it, and verify's lock-free result stands (a review finding: every
    read ended in ENGRAM_READ_ONLY)."""
    assert not (read_only / ".engram" / "index.json").exists()
    code = main(argv)
    captured = capsys.readouterr()
    assert "ENGRAM_READ_ONLY" not in captured.out + captured.err, captured.err
    assert code == (1 if argv == ["verify"] else 0), captured.err
    if argv[0] in ("search", "load", "list", "show"):
        assert "use-uv" in captured.out or "Use uv" in captured.out
