"""Files engram itself removes (gc, promote) are not reported as missing by verify."""

from __future__ import annotations

import time
from pathlib import Path

from store.store import Store
from store.write import commits, notes, proposals, review


def test_gc_and_promote_leave_verify_clean(workspace: Path) -> None:
    """engram's own removals are recorded as such (seals.log), so verify stays clean."""
    review.accept(Store(workspace))
    store = Store(workspace)
    kept = notes.save_note(store, notes.draft_note(store, "Tax backfill paused at batch 41 of 90"))
    gone = notes.save_note(store, notes.draft_note(store, "Staging invoices export is re-running now"))
    assert review.verify(store)["ok"] is True

    later = Store(workspace, clock=lambda: time.time() + 30 * 86400)
    removed = notes.gc(later)
    assert kept["id"] in removed and gone["id"] in removed
    report = review.verify(Store(workspace))
    assert report["missing"] == [] and report["ok"] is True

    fresh = notes.save_note(store, notes.draft_note(store, "Webhook retries now back off up to 64 s"))
    preview = proposals.promote(store, fresh["id"], "fact")
    commits.commit(store, preview.token, "all")
    assert not (workspace / ".engram" / "working" / f"{fresh['id']}.md").exists()
    report = review.verify(Store(workspace))
    assert report["missing"] == [] and report["mismatched"] == [] and report["ok"] is True
