"""What the file system does on Windows and macOS, faked here on Linux (issue 22, Build 6):
the open flags Windows lacks, folders it cannot fsync, renames over a file in use, the secret's
mode that chmod cannot set there, and the lock it takes without flock.

The store's modules are found in today's layout or in ab538aa's (tests/platform/layouts.py);
the tests that say so fail there by what the code does."""

from __future__ import annotations

import errno
import functools
import os
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import filelock
import pytest

from tests.platform.layouts import engram, first

WINDOWS_LACKS = ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC", "O_DIRECTORY", "O_NOCTTY")
"""POSIX open flags that Windows' `os` module does not have."""


def fsutil() -> Any:
    return first("store.fsutil", "store.files.fsutil")


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """sys.platform says win32 (only store code runs under it: no CLI, no subprocess)."""
    monkeypatch.setattr(sys, "platform", "win32")


def test_the_open_flags_are_posix_on_linux_and_binary_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linux keeps exactly its flags; Windows' os gets O_BINARY (no newline translation) and
    none of the POSIX ones it does not have."""
    from store.files import fs_platform

    posix = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    assert fs_platform.OPEN_FLAGS == fs_platform.open_flags() == posix
    assert fs_platform.OPEN_FOLLOWING == os.O_NONBLOCK | os.O_CLOEXEC
    assert fs_platform.CREATE_FLAGS == os.O_NOFOLLOW | os.O_CLOEXEC
    assert fs_platform.LINKS_FOLLOWED is False
    for name in WINDOWS_LACKS:
        monkeypatch.delattr(os, name)
    monkeypatch.setattr(os, "O_BINARY", 0x8000, raising=False)
    assert fs_platform.open_flags() == fs_platform.open_flags(follow=True) == 0x8000
    assert fs_platform.open_flags(nonblock=False) == 0x8000


def test_engram_runs_without_the_open_flags_windows_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """init, add, list, search, show and forget with os lacking O_NOFOLLOW, O_NONBLOCK,
    O_CLOEXEC, O_DIRECTORY and O_NOCTTY, as on Windows, and the Windows lock (fails on ab538aa:
    AttributeError: module 'os' has no attribute 'O_NOFOLLOW')."""
    lock = first("store.lock", "store.files.lock")
    if hasattr(lock, "_polling_acquire"):  # the queue lock is POSIX-only: Windows takes this one
        from store.files import polling_lock

        monkeypatch.setattr(
            lock, "_acquire", functools.partial(lock._polling_acquire, take=polling_lock.acquire)
        )
        # filelock's own Unix lock needs O_NONBLOCK; its Windows one (msvcrt) cannot run here
        monkeypatch.setattr(polling_lock, "FileLock", filelock.SoftFileLock)
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    for name in WINDOWS_LACKS:
        monkeypatch.delattr(os, name)
    assert engram(["init"]) == 0
    assert engram(["add", "--yes", "--id", "cents", "rule", "Money is integer cents", "Never floats."]) == 0
    assert engram(["list"]) == 0
    assert engram(["search", "cents"]) == 0
    capsys.readouterr()
    assert engram(["show", "cents"]) == 0
    assert "Never floats." in capsys.readouterr().out
    assert engram(["forget", "cents"]) == 0


@pytest.fixture
def no_nofollow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store opens files as on Windows: os.open follows links whatever the flags."""
    from store.files import fs_platform

    monkeypatch.setattr(fs_platform, "LINKS_FOLLOWED", True)
    monkeypatch.setattr(fs_platform, "OPEN_FLAGS", fs_platform.OPEN_FOLLOWING)


def test_without_o_nofollow_a_link_is_still_refused_after_the_open(tmp_path: Path, no_nofollow: None) -> None:
    """Where os.open cannot refuse a link (Windows), the file opened is checked against the
    path's lstat: a planted link is refused as before, a regular file reads, and a file the user
    keeps as a link (follow=True) is read through it."""
    from store.errors import NotRegular
    from store.files.fsutil import read_regular

    target = tmp_path / "profile"
    target.write_text("the user's file\n")
    planted = tmp_path / "index.json"
    planted.symlink_to(target)
    with pytest.raises(NotRegular) as caught:
        read_regular(planted)
    assert caught.value.errno == errno.ELOOP
    assert read_regular(target) == b"the user's file\n"
    assert read_regular(planted, follow=True) == b"the user's file\n"


def _recording_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    real = os.open

    def recording(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording)
    return opened


def test_folders_are_fsynced_on_posix_and_skipped_on_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rename is made durable by fsyncing its folder on Linux and macOS; Windows cannot open a
    folder as a file, so engram never tries there (fails on ab538aa: it opened the folder)."""
    opened = _recording_opens(monkeypatch)
    for platform, expected in (("linux", [str(tmp_path)]), ("darwin", [str(tmp_path)]), ("win32", [])):
        opened.clear()
        monkeypatch.setattr(sys, "platform", platform)
        fsutil().fsync_dir(tmp_path)
        assert opened == expected, platform


def test_windows_tries_a_rename_over_a_file_in_use_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, windows: None
) -> None:
    """Windows refuses a rename over a file another process holds open (PermissionError): the
    write is tried again and lands (fails on ab538aa: the write failed at once)."""
    folder = tmp_path / "state"
    folder.mkdir()
    target = folder / "index.json"
    target.write_bytes(b"old")
    real, refused = os.replace, list[Any]()

    def busy_twice(source: Any, dest: Any) -> None:
        if len(refused) < 2:
            refused.append(dest)
            raise PermissionError(errno.EACCES, "The process cannot access the file", str(dest))
        real(source, dest)

    monkeypatch.setattr(os, "replace", busy_twice)
    fsutil().write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and len(refused) == 2
    assert sorted(p.name for p in folder.iterdir()) == ["index.json"]


def test_a_rename_refused_for_good_fails_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past its retry time on Windows, and at once on POSIX, the PermissionError is the
    caller's, the old file is whole and the temp file is gone."""
    from store.files import fs_platform
    from store.files import fsutil as today

    monkeypatch.setattr(fs_platform, "REPLACE_RETRY_SECONDS", 0.05)
    folder = tmp_path / "state"
    folder.mkdir()
    target = folder / "index.json"
    target.write_bytes(b"old")
    tries: list[str] = []

    def refused(source: Any, dest: Any) -> None:
        tries.append(str(dest))
        raise PermissionError(errno.EACCES, "Access is denied", str(dest))

    monkeypatch.setattr(os, "replace", refused)
    for platform in ("linux", "win32"):
        tries.clear()
        monkeypatch.setattr(sys, "platform", platform)
        with pytest.raises(PermissionError):
            today.write_atomic(target, b"new")
        assert (len(tries) == 1) is (platform == "linux"), (platform, tries)
        assert target.read_bytes() == b"old"
        assert sorted(p.name for p in folder.iterdir()) == ["index.json"]


def test_a_folder_at_a_file_path_is_not_a_regular_file_on_windows_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, windows: None
) -> None:
    """Windows answers the open of a folder with EACCES, not EISDIR: still 'not a regular file'
    (NotRegular, which callers name with its fix), not a permission error (fails on ab538aa)."""
    errors = first("store.errors")
    folder = tmp_path / "journal.json"
    folder.mkdir()
    real = os.open

    def like_windows(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.path.isdir(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", like_windows)
    with pytest.raises(errors.NotRegular):
        fsutil().read_regular(folder)


def _secret_module() -> Any:
    return first("store.secret", "store.files.user_key")


def test_the_secrets_mode_is_checked_on_posix_and_not_on_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows reports every writable file as 0666 (chmod sets only the read-only flag): a
    secret there is kept, not replaced at every start with a notice, which would rebuild every
    derived file and drop every pending proposal (fails on ab538aa); on Linux a 0666 secret is
    replaced, as before."""
    secret = _secret_module()
    for platform, kept in (("win32", True), ("linux", False)):
        home = tmp_path / platform
        home.mkdir()
        key = os.urandom(32)
        (home / "secret").write_bytes(key)
        os.chmod(home / "secret", 0o666)
        monkeypatch.setattr(sys, "platform", platform)
        found = secret.user_secret(home)
        assert (found.key == key) is kept, platform
        assert (found.notice is None) is kept, (platform, found.notice)
        if not kept:
            assert "had mode 0666, not 0600" in found.notice
            assert stat.S_IMODE(os.stat(home / "secret").st_mode) == 0o600


@pytest.fixture
def polling_lock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """store.files.lock with the lock Windows takes (filelock's), which also runs on Linux."""
    from store.files import lock, polling_lock

    monkeypatch.setattr(lock, "_acquire", functools.partial(lock._polling_acquire, take=polling_lock.acquire))
    yield lock


def test_the_windows_lock_excludes_other_threads_and_times_out_busy(
    tmp_path: Path, polling_lock: Any
) -> None:
    """Windows' lock: held by one thread, another waits and gets ENGRAM_BUSY at its timeout;
    re-entrant in the holder; free again once let go."""
    from store.errors import Busy

    lock_path = tmp_path / ".engram" / "engram.lock"
    held, release, outcome = threading.Event(), threading.Event(), []

    def holder() -> None:
        with polling_lock.workspace_lock(lock_path), polling_lock.workspace_lock(lock_path):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        with pytest.raises(Busy), polling_lock.workspace_lock(lock_path, timeout=0.2):
            outcome.append("obtained while held")
    finally:
        release.set()
        thread.join(10)
    with polling_lock.workspace_lock(lock_path, timeout=2):
        outcome.append("obtained")
    assert outcome == ["obtained"]


@pytest.mark.parametrize("planted", ["link", "folder"])
def test_the_windows_lock_refuses_a_planted_lock_file(
    tmp_path: Path, polling_lock: Any, planted: str
) -> None:
    """A clone's link (filelock would truncate its target) or folder at the lock's path is
    ENGRAM_UNSAFE_PATH naming the fix, and the link's target is untouched."""
    from store.errors import UnsafePath

    lock_path = tmp_path / ".engram" / "engram.lock"
    lock_path.parent.mkdir()
    victim = tmp_path / "profile"
    victim.write_text("keep me\n")
    if planted == "link":
        lock_path.symlink_to(victim)
    else:
        lock_path.mkdir()
    with pytest.raises(UnsafePath) as caught, polling_lock.workspace_lock(lock_path, timeout=0.2):
        pass
    assert "engram recreates its lock files" in str(caught.value)
    assert victim.read_text() == "keep me\n"
