"""`engram verify --accept` racing a commit (issue 9): the accept is under the workspace lock and
works from files re-read after taking it, so engram's own commit is never reported as "added by
hand" or "edited outside engram"."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from store.read.catalog import Catalog
from store.store import Store
from store.write import commits, proposals, review

TITLE = "Quux widgets frobnicate nightly"


@pytest.mark.timeout(30)
def test_a_commit_landing_while_accept_reads_the_files_stays_engrams_own(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic interleaving: the commit runs right after accept has listed the files. It
    must wait for accept's lock (then seal itself), not slip in before accept writes the index."""
    other = Store(workspace)
    entries, redactions = proposals.draft(
        other, [{"type": "fact", "title": TITLE, "body": "Zorblax glimmer."}]
    )
    preview = proposals.store_proposal(other, entries, redactions, "save")
    accepting = Store(workspace)
    accepting.view()  # a store that has read the files before, as a long-running process has
    armed = threading.Event()
    committed = threading.Event()
    queue = workspace / ".engram" / "engram.lock.queue.lock"
    main = threading.current_thread()
    real_refresh = Catalog.refresh

    def commit_elsewhere() -> None:
        commits.commit(other, preview.token, "all")
        committed.set()

    def refresh(self: Catalog, **kwargs: Any) -> Any:
        snapshot = real_refresh(self, **kwargs)
        if threading.current_thread() is main and armed.is_set():
            armed.clear()
            threading.Thread(target=commit_elsewhere).start()
            deadline = time.monotonic() + 10  # the commit finishes, or queues behind accept's lock
            while not committed.is_set() and time.monotonic() < deadline:
                if queue.is_dir() and len(os.listdir(queue)) >= 2:
                    break
                time.sleep(0.005)
        return snapshot

    monkeypatch.setattr(Catalog, "refresh", refresh)
    armed.set()
    review.accept(accepting)
    assert committed.wait(10)
    assert (workspace / ".engram" / "memory" / "quux-widgets-frobnicate-nightly.md").exists()
    report = review.verify(Store(workspace))
    assert report["unindexed"] == [] and report["mismatched"] == [] and report["missing"] == []
    assert report["ok"] is True


@pytest.mark.timeout(60)
def test_accept_in_a_loop_beside_commits_leaves_verify_clean(workspace: Path) -> None:
    """Real concurrency: one thread commits 10 memories while another accepts over and over."""
    review.accept(Store(workspace))
    done = threading.Event()
    errors: list[BaseException] = []

    def commit_in_a_loop() -> None:
        store = Store(workspace)
        try:
            for n in range(10):
                title = f"Zorblax {n} wobbegong glimmer {n * 7919}"
                found, redactions = proposals.draft(
                    store, [{"type": "fact", "title": title, "body": f"{title}."}]
                )
                preview = proposals.store_proposal(store, found, redactions, "save")
                commits.commit(store, preview.token, "all")
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=commit_in_a_loop)
    thread.start()
    accepting = Store(workspace)
    while not done.is_set():
        review.accept(accepting)
    thread.join(30)
    assert errors == []
    report = review.verify(Store(workspace))
    assert report["unindexed"] == [] and report["mismatched"] == [] and report["missing"] == []


@pytest.mark.timeout(30)
def test_verify_racing_a_commit_does_not_report_engrams_own_write(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic interleaving: a commit lands between verify's look at the files and its read
    of the recorded seals. The seal then names a file verify has not seen: not "missing" (nor, the
    other way round, "added by hand"); a result that is not clean is confirmed under the lock."""
    review.accept(Store(workspace))
    other = Store(workspace)
    entries, redactions = proposals.draft(
        other, [{"type": "fact", "title": TITLE, "body": "Zorblax glimmer."}]
    )
    preview = proposals.store_proposal(other, entries, redactions, "save")
    verifying = Store(workspace)
    verifying.view()
    armed = threading.Event()
    main = threading.current_thread()
    real_read_index = Catalog.read_index

    def read_index(self: Catalog) -> Any:
        if threading.current_thread() is main and armed.is_set():
            armed.clear()
            commits.commit(other, preview.token, "all")  # nothing holds the lock: it runs now
        return real_read_index(self)

    monkeypatch.setattr(Catalog, "read_index", read_index)
    armed.set()
    report = review.verify(verifying)
    assert not armed.is_set()
    assert (report["mismatched"], report["missing"], report["unindexed"]) == ([], [], [])
    assert report["ok"] is True
