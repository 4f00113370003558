"""Planted non-regular entries, links and hard links under `.engram/` (SPEC §2): a FIFO, a device,
a folder or a link where engram expects one of its files never hangs, crashes or redirects a
read or a write; reads run on defaults (or treat the file as absent) with a diagnostic, writes
are refused with ENGRAM_UNSAFE_PATH naming the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram_mcp.cli.main import main
from store import status as store_status
from store.config import load_config
from store.errors import StoreError
from store.files.workspace import STATE_FILES
from store.store import Store
from store.write import commits, review, transaction
from tests.support.hangs import in_thread, release_fifo
from tests.support.paths import ENGRAM
from tests.support.proposals import candidate, fixed, propose
from tests.support.wire import WireSession


def _codes(config_diagnostics: tuple[tuple[str, str], ...]) -> list[str]:
    return [code for code, _ in config_diagnostics]


# --- M2: config.json -------------------------------------------------------------------------------
def test_a_fifo_at_the_workspace_config_runs_on_defaults_without_hanging(workspace: Path) -> None:
    path = workspace / ".engram" / "config.json"
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    try:
        config = in_thread(lambda: Store(workspace).config())
        assert config.budget_tokens == 2000
        assert any("regular file" in message for _, message in config.diagnostics)
        in_thread(lambda: store_status.report(Store(workspace)))
    finally:
        release_fifo(path)


@pytest.mark.parametrize("target", ["/dev/null", "outside"])
def test_a_workspace_config_linked_outside_is_refused_with_unsafe_path(
    workspace: Path, tmp_path: Path, target: str
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"load": {"budget_tokens": 100}}')
    path = workspace / ".engram" / "config.json"
    path.unlink(missing_ok=True)
    os.symlink(outside if target == "outside" else target, path)
    config = in_thread(lambda: Store(workspace).config())
    assert config.budget_tokens == 2000
    assert "ENGRAM_UNSAFE_PATH" in _codes(config.diagnostics)
    assert any(".engram/config.json" in m and "link" in m for _, m in config.diagnostics)


def test_an_oversized_config_is_a_diagnostic_and_defaults(workspace: Path) -> None:
    path = workspace / ".engram" / "config.json"
    path.write_bytes(b'{"role": "' + b"a" * (2 << 20) + b'"}')
    config = Store(workspace).config()
    assert config.role == "default"
    assert any("larger than" in m for _, m in config.diagnostics)


def test_the_user_config_may_be_a_link_to_a_regular_file_but_not_to_a_device(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles.json"
    dotfiles.write_text('{"load": {"budget_tokens": 300}}')
    user = tmp_path / "user-config.json"
    os.symlink(dotfiles, user)
    assert load_config(user, tmp_path / "none.json").budget_tokens == 300
    user.unlink()
    os.symlink("/dev/null", user)
    config = in_thread(lambda: load_config(user, tmp_path / "none.json"))
    assert config.budget_tokens == 2000
    assert any("$ENGRAM_HOME/config.json" in m and "regular file" in m for _, m in config.diagnostics)


def test_a_workspace_config_linked_to_stdin_does_not_eat_the_server_stream(workspace: Path) -> None:
    path = workspace / ".engram" / "config.json"
    path.unlink(missing_ok=True)
    os.symlink("/dev/stdin", path)
    session = WireSession(workspace)
    try:
        session.initialize()
        reply = session.request("tools/call", {"name": "engram_status", "arguments": {}}, timeout=10.0)
        assert "result" in reply
        second = session.request("tools/call", {"name": "engram_search", "arguments": {"query": "uv"}})
        assert "result" in second
    finally:
        session.close()


# --- M3: a folder at a state path ------------------------------------------------------------------
@pytest.mark.parametrize("name", STATE_FILES)
def test_a_folder_at_a_state_path_never_crashes_reads_and_refuses_writes(workspace: Path, name: str) -> None:
    folder = workspace / ".engram" / name
    folder.mkdir()
    (folder / "keep").write_text("x")
    store = Store(workspace, clock=fixed())
    transaction.recover(store)
    store_status.report(store)
    store.search("uv")
    review.verify(store)
    store.close()
    assert any(
        code == "ENGRAM_UNSAFE_PATH" and f"Remove .engram/{name}" in message
        for code, message in store.notices()
    )
    with pytest.raises(StoreError) as caught:
        propose(Store(workspace, clock=fixed()), [candidate()])
    assert caught.value.code == "ENGRAM_UNSAFE_PATH"
    assert f"remove .engram/{name}" in caught.value.message.lower()
    assert (folder / "keep").read_text() == "x"


@pytest.mark.parametrize("name", STATE_FILES)
def test_the_cli_answers_with_a_folder_at_a_state_path(
    workspace: Path, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / ".engram" / name).mkdir()
    monkeypatch.chdir(workspace)
    assert main(["status"]) == 0
    main(["verify"])
    main(["search", "uv"])
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_the_server_starts_and_answers_with_a_folder_at_the_journal(workspace: Path) -> None:
    (workspace / ".engram" / "journal.json").mkdir()
    (workspace / ".engram" / "journal.json" / "keep").write_text("x")
    session = WireSession(workspace)
    try:
        session.initialize()
        reply = session.request("tools/call", {"name": "engram_status", "arguments": {}})
        assert "result" in reply
    finally:
        session.close()


# --- M4: FIFOs at seals.log and at a queue ticket -------------------------------------------------
def test_a_fifo_at_seals_log_refuses_a_commit_without_hanging(workspace: Path) -> None:
    store = Store(workspace, clock=fixed())
    preview = propose(store, [candidate()])
    seals = workspace / ".engram" / "seals.log"
    seals.unlink(missing_ok=True)
    os.mkfifo(seals)
    try:
        with pytest.raises(StoreError) as caught:
            in_thread(lambda: commits.commit(store, preview.token, "all"))
        assert caught.value.code == "ENGRAM_UNSAFE_PATH"
        assert "remove .engram/seals.log" in caught.value.message.lower()
        in_thread(lambda: review.verify(Store(workspace)))
    finally:
        release_fifo(seals)


def test_a_fifo_appearing_at_seals_log_mid_commit_does_not_block_the_append(workspace: Path) -> None:
    from store.read.catalog import Catalog

    store = Store(workspace, clock=fixed())
    store.view()
    seals = workspace / ".engram" / "seals.log"
    seals.unlink(missing_ok=True)
    os.mkfifo(seals)
    try:
        catalog: Catalog = store._catalogs[0]
        with pytest.raises(StoreError) as caught:
            in_thread(lambda: catalog.seal({"durable/use-uv-for-python"}))
        assert caught.value.code == "ENGRAM_UNSAFE_PATH"
    finally:
        release_fifo(seals)


@pytest.mark.skipif(sys.platform == "win32", reason="the ticket queue is POSIX only")
def test_a_fifo_at_a_queue_ticket_is_a_dead_ticket_not_a_hang(workspace: Path) -> None:
    from store.files.lock import workspace_lock

    queue = workspace / ".engram" / "engram.lock.queue.lock"
    queue.mkdir()
    ticket = queue / "000000000001"
    os.mkfifo(ticket)
    try:

        def take() -> None:
            with workspace_lock(workspace / ".engram" / "engram.lock", timeout=2.0):
                pass

        in_thread(take)
        assert not ticket.exists()
        in_thread(lambda: store_status.report(Store(workspace)))
    finally:
        release_fifo(ticket)


def test_the_cli_status_with_a_fifo_ticket_answers(workspace: Path) -> None:
    queue = workspace / ".engram" / "engram.lock.queue.lock"
    queue.mkdir()
    os.mkfifo(queue / "000000000001")
    done = subprocess.run(
        [ENGRAM, "status"], cwd=workspace, capture_output=True, timeout=20, check=False, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


# --- L1: a hard-linked seals.log ------------------------------------------------------------------
def test_a_hard_linked_seals_log_is_replaced_never_written_through(workspace: Path, tmp_path: Path) -> None:
    store = Store(workspace, clock=fixed())
    review.accept(store)
    preview = propose(store, [candidate()])
    profile = tmp_path / "profile"
    profile.write_text("export PATH=/usr/bin\n")
    seals = workspace / ".engram" / "seals.log"
    seals.unlink(missing_ok=True)
    os.link(profile, seals)
    assert len(commits.commit(store, preview.token, "all").written) == 1
    assert profile.read_text() == "export PATH=/usr/bin\n"
    assert os.stat(profile).st_nlink == 1
    assert os.stat(seals).st_nlink == 1 and b"frobnicate" in seals.read_bytes()
    assert any("seals.log" in message and "hard link" in message for _, message in store.notices())
    report = review.verify(Store(workspace, clock=fixed()))
    assert report["ok"], report


# --- L3: a damaged index does not blame the user ---------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_non_regular_index_is_reported_as_the_problem_not_as_hand_edits(workspace: Path, kind: str) -> None:
    store = Store(workspace, clock=fixed())
    review.accept(store)  # the fixture's files, reviewed
    preview = propose(store, [candidate()])
    commits.commit(store, preview.token, "all")
    store.close()
    assert review.verify(Store(workspace))["ok"]
    index = workspace / ".engram" / "index.json"
    index.unlink()
    if kind == "fifo":
        os.mkfifo(index)
    else:
        index.mkdir()
    try:
        report = in_thread(lambda: review.verify(Store(workspace)))
        assert "frobnicate-the-quux-widgets-nightly" not in report["unindexed"]
        assert not report["ok"]
        assert any(".engram/index.json" in f"{p.file}: {p.message}" for p in report["problems"])
    finally:
        release_fifo(index)


def test_a_bounded_read_never_allocates_its_limit(tmp_path: Path) -> None:
    """read(n) allocates n bytes up front, so the bound is checked on the file's size, and a
    small file read under a huge limit asks only for what it holds (L3: a 1 GiB limit failed
    every command under `ulimit -v 1G`)."""
    import tracemalloc

    from store.errors import NotRegular
    from store.files.fsutil import read_regular

    small = tmp_path / "small.json"
    small.write_bytes(b"{}")
    tracemalloc.start()
    try:
        assert read_regular(small, 1 << 30) == b"{}"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
    sparse = tmp_path / "sparse.bin"
    with sparse.open("wb") as handle:
        handle.truncate((1 << 30) + 1)  # a hole: no data is written or read
    with pytest.raises(NotRegular, match="larger than"):
        read_regular(sparse, 1 << 30)
