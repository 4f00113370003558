"""Issue 23, small messages: an `$ENGRAM_HOME` that cannot be used (linked to itself, a file).

Before, the secret's notice said "replaced with a new secret" though nothing could be written,
status said the user scope was "not created yet", every file of the home got a notice of its own
(config, memory folders, index, seals), and `engram add` ended in a traceback. Now the store
says once what is wrong with the home and its fix, reads the project alone, keeps no derived
file and refuses writes with ENGRAM_UNSAFE_PATH.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram_mcp.cli.main import main
from engram_mcp.ops import read_ops
from store.errors import UnsafePath
from store.files.user_key import user_secret
from store.store import Store
from store.write import commits


@pytest.fixture
def looped_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """ENGRAM_HOME is a symbolic link to itself; the current folder is a new git workspace."""
    home = tmp_path / "looped"
    home.symlink_to(home)
    monkeypatch.setenv("ENGRAM_HOME", str(home))
    workspace = tmp_path / "project"
    (workspace / ".git").mkdir(parents=True)
    monkeypatch.chdir(workspace)
    yield home


def _engram(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_secret_notice_does_not_claim_a_replacement_nothing_could_write(looped_home: Path) -> None:
    secret = user_secret(looped_home)
    assert secret.notice is not None
    assert "replaced with a new secret" not in secret.notice
    assert "no new one could be written" in secret.notice
    assert "for this process alone" in secret.notice
    assert len(secret.key) == 32 and not secret.stored
    assert os.path.islink(looped_home)  # untouched


def test_a_home_that_is_a_file_gets_a_key_for_the_process_too(tmp_path: Path) -> None:
    home = tmp_path / "a-file"
    home.write_text("not a folder")
    secret = user_secret(home)
    assert secret.notice is not None and "replaced" not in secret.notice
    assert not secret.stored
    assert home.read_text() == "not a folder"


def test_status_says_why_the_home_cannot_be_used_not_that_it_is_not_created_yet(
    looped_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _engram(capsys, "status")
    assert code == 0, err
    scope_line = next(line for line in out.splitlines() if line.startswith("user scope"))
    assert "not created yet" not in scope_line
    assert "Too many levels of symbolic links" in scope_line or "cannot be examined" in scope_line
    assert "point ENGRAM_HOME at one" in scope_line
    assert "replaced with a new secret" not in out + err


def test_status_still_says_not_created_yet_when_there_is_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(A read-only store, as `engram status` makes the secret, and so the folder, when it runs.)"""
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "nothing-here"))
    (tmp_path / "project" / ".git").mkdir(parents=True)
    said = read_ops.status(Store(tmp_path / "project", read_only=True, background=False)).text
    assert "(not created yet)" in next(line for line in said.splitlines() if line.startswith("user scope"))
    assert not (tmp_path / "nothing-here").exists()


def test_one_notice_for_the_home_and_none_for_each_of_its_files(looped_home: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "project", background=False)
    view = store.view()
    store.key()
    store.config()
    about_home = [(code, text) for code, text in store.notices() if "ENGRAM_HOME" in text]
    assert len(about_home) == 1, store.notices()
    code, text = about_home[0]
    assert code == "ENGRAM_UNSAFE_PATH"
    assert text.startswith(f"$ENGRAM_HOME ({looped_home}) cannot be examined")
    assert "Fix: make it a folder you own" in text
    assert not any(problem for snapshot in view.snapshots for problem in snapshot.problems)
    assert store.config().diagnostics == ()


def test_a_write_is_refused_with_its_reason_not_a_traceback(
    looped_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _engram(capsys, "add", "--yes", "fact", "A fact", "Some body here")
    assert code == 1
    assert "Traceback" not in err
    assert "ENGRAM_UNSAFE_PATH" in out + err and "nothing was written" in out + err
    assert not list((tmp_path / "project").rglob("*.md"))
    store = Store(tmp_path / "project", background=False)
    with pytest.raises(UnsafePath):
        commits.apply_entries(store, [])
    assert not (tmp_path / "project" / ".engram" / "index.json").exists()
