"""The workspace lock (SPEC §2 "Concurrency and durability"; issue 9 "a lock that does not starve").

Timeouts are injected (never the real 5 s); threads stand in for processes where the kernel
treats them alike (each acquisition is its own open file), real processes where death matters.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from store.errors import Busy
from store.files.lock import workspace_lock
from tests.support.store_helpers import ask_elsewhere, hold_elsewhere, let_go


def tickets(queue: Path, count: int) -> None:
    """Wait (10 s at most) until the lock's queue holds `count` tickets, and assert it does."""
    deadline = time.monotonic() + 10
    while len(os.listdir(queue)) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(os.listdir(queue)) == count


def lock_path(tmp_path: Path) -> Path:
    root = tmp_path / ".engram"
    root.mkdir(exist_ok=True)
    return root / "engram.lock"


@pytest.mark.timeout(30)
def test_a_writer_that_retakes_the_lock_at_once_cannot_starve_a_waiter(tmp_path: Path) -> None:
    """Issue 9: a polling lock let a writer that releases and retakes the lock win every time."""
    path = lock_path(tmp_path)
    stop = threading.Event()
    started = threading.Event()
    rounds = 0

    def barging_writer() -> None:
        nonlocal rounds
        while not stop.is_set():
            with workspace_lock(path, timeout=5):
                started.set()
                rounds += 1
                time.sleep(0.005)

    writer = threading.Thread(target=barging_writer)
    writer.start()
    try:
        assert started.wait(5)
        for _ in range(5):
            before = rounds
            with workspace_lock(path, timeout=1.0):  # Busy here is starvation
                pass
            assert rounds - before <= 3, "the waiter was overtaken more than the writers ahead of it"
    finally:
        stop.set()
        writer.join(10)


@pytest.mark.timeout(30)
def test_waiters_get_the_lock_in_the_order_they_arrived(tmp_path: Path) -> None:
    """engram's choice: first come, first served, across threads (and processes alike)."""
    path = lock_path(tmp_path)
    queue = path.with_name("engram.lock.queue.lock")
    order: list[int] = []
    threads = []
    holder = hold_elsewhere(path)
    try:
        for n in range(4):

            def wait_turn(n: int = n) -> None:
                with workspace_lock(path, timeout=20):
                    order.append(n)

            thread = threading.Thread(target=wait_turn)
            thread.start()
            threads.append(thread)
            tickets(queue, n + 2)  # each waiter has its ticket before the next starts
    finally:
        let_go(holder)
        for thread in threads:
            thread.join(20)
    assert order == [0, 1, 2, 3]
    assert os.listdir(queue) == []


@pytest.mark.timeout(30)
def test_a_lock_held_past_the_timeout_is_busy_and_the_waiter_leaves_no_trace(tmp_path: Path) -> None:
    """Spec-mandated: ENGRAM_BUSY after the timeout, nothing changed; a later writer is not blocked
    by the waiter that gave up."""
    path = lock_path(tmp_path)
    holder = hold_elsewhere(path)
    try:
        started = time.monotonic()
        with pytest.raises(Busy) as info, workspace_lock(path, timeout=0.3):
            pass
        assert 0.25 <= time.monotonic() - started < 3
        assert info.value.code == "ENGRAM_BUSY"
        assert "nothing was changed" in info.value.message and "retrying is safe" in info.value.message
    finally:
        let_go(holder)
    started = time.monotonic()
    for _ in range(3):
        with workspace_lock(path, timeout=2):
            pass
    assert time.monotonic() - started < 2


@pytest.mark.timeout(30)
def test_the_default_timeout_comes_from_engram_lock_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """engram's choice: ENGRAM_LOCK_TIMEOUT (seconds) replaces the 5 s default, so tests and slow
    disks need not patch code."""
    path = lock_path(tmp_path)
    monkeypatch.setenv("ENGRAM_LOCK_TIMEOUT", "0.2")
    holder = hold_elsewhere(path)
    try:
        started = time.monotonic()
        with pytest.raises(Busy, match=r"more than 0\.2 s"), workspace_lock(path):
            pass
        assert time.monotonic() - started < 3
    finally:
        let_go(holder)


@pytest.mark.timeout(30)
def test_a_killed_holder_and_a_killed_waiter_do_not_wedge_the_lock(tmp_path: Path) -> None:
    """A SIGKILL drops the kernel lock; a dead waiter's ticket is passed over, not waited for."""
    path = lock_path(tmp_path)
    holder = hold_elsewhere(path)
    waiter = ask_elsewhere(path)
    queue = path.with_name("engram.lock.queue.lock")
    tickets(queue, 2)  # holder + the waiter's ticket
    waiter.send_signal(signal.SIGKILL)
    let_go(waiter)
    holder.send_signal(signal.SIGKILL)
    let_go(holder)
    assert len(os.listdir(queue)) == 2  # both tickets left behind by the dead
    started = time.monotonic()
    with workspace_lock(path, timeout=2):
        pass
    assert time.monotonic() - started < 2
    assert os.listdir(queue) == []


def test_the_lock_is_reentrant_in_a_thread_and_exclusive_across_threads(tmp_path: Path) -> None:
    path = lock_path(tmp_path)
    other: list[str] = []

    def try_lock() -> None:
        try:
            with workspace_lock(path, timeout=0.2):
                other.append("got it")
        except Busy:
            other.append("busy")

    with workspace_lock(path, timeout=1), workspace_lock(path, timeout=1):
        thread = threading.Thread(target=try_lock)
        thread.start()
        thread.join(10)
    assert other == ["busy"]
    thread = threading.Thread(target=try_lock)
    thread.start()
    thread.join(10)
    assert other == ["busy", "got it"]


def test_a_symlinked_lock_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    """SPEC §2: a cloned repository is untrusted; a planted `engram.lock` link must not truncate
    (or create) the file it points to."""
    path = lock_path(tmp_path)
    target = tmp_path / "bashrc"
    target.write_text("export PATH=/usr/bin\n")
    path.symlink_to(target)
    with pytest.raises(Exception) as info, workspace_lock(path, timeout=0.5):
        pass
    assert getattr(info.value, "code", None) == "ENGRAM_UNSAFE_PATH"
    assert target.read_text() == "export PATH=/usr/bin\n"


def test_a_symlinked_queue_folder_is_refused_and_nothing_is_created_behind_it(tmp_path: Path) -> None:
    path = lock_path(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path.with_name("engram.lock.queue.lock").symlink_to(elsewhere)
    with pytest.raises(Exception) as info, workspace_lock(path, timeout=0.5):
        pass
    assert getattr(info.value, "code", None) == "ENGRAM_UNSAFE_PATH"
    assert list(elsewhere.iterdir()) == []
