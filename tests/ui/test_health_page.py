"""The health panel (issue 23, Build 4): doctor's and verify's findings, each with its code, file,
message and fix, and the memories `engram stale` lists."""

from __future__ import annotations

from pathlib import Path

from tests.ui.conftest import Ui


def test_health_shows_findings_with_their_fix_and_verify(ws: Path, page: Ui) -> None:
    (ws / ".engram" / "memory" / "broken-one.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    html = page.html("/health")
    assert "memory.unparsed" in html and ".engram/memory/broken-one.md" in html
    assert "<h2>Verify</h2>" in html
    assert "Not yet recorded by engram (added by hand)" in html  # the fixture's files, never accepted
    assert "engram verify --accept" in html
    assert "workspace.outside_git" in html  # a step to know, listed apart
    assert 'href="/memory/tax-rounding"' in html and "api/tax.py renamed or deleted" in html


def test_health_of_a_clean_store_says_nothing_to_fix(ws: Path, page: Ui) -> None:
    from store.write import review

    review.accept(page.app.page.store)
    html = page.html("/health")
    assert "Every memory file matches what engram recorded." in html
    assert "memory.unparsed" not in html and "Nothing to fix." in html
