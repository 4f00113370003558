"""Issue 23, Build 4: the pictures (memories by type and age; freshness against the cited code)."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from engram_mcp.ui.overview_page import age_band, chart
from tests.support.store_helpers import write_memory
from tests.ui.conftest import Ui, app


def test_age_bands() -> None:
    today = date(2026, 12, 2)
    assert [
        age_band(d, today) for d in ("2026-12-01", "2026-11-20", "2026-10-01", "2026-03-01", "2024-01-01")
    ] == [
        0,
        1,
        2,
        3,
        4,
    ]
    assert age_band("not a date", today) == 4


def test_bars_are_scaled_to_the_largest_total() -> None:
    laid = chart([("a", [2, 2]), ("b", [1, 0])], [("x", "#000"), ("y", "#111")])
    first, second = laid.bars
    assert sum(s.width for s in first.segments) == 560
    assert [s.width for s in second.segments] == [140]
    assert second.y == 26 and laid.height == 52


def test_the_overview_draws_both_pictures_as_svg_with_the_numbers_as_a_table(page: Ui, ws: Path) -> None:
    (ws / "api").mkdir()
    (ws / "api" / "tax.py").write_text("def rounded():\n    pass\n")  # tax-rounding's ref resolves
    write_memory(
        ws, "gone-code", title="Uses the old helper", body="See old/helper.py.\n", refs=["old/helper.py"]
    )
    html = page.html("/overview")
    assert html.count("<svg ") == 2
    assert "<script" not in html and "style=" not in html  # the CSP allows neither
    titles = re.findall(r"<title>([^<]*)</title>", html)
    assert any(t.startswith("fact, ") for t in titles) and any(t.startswith("decision, ") for t in titles)
    assert any("checks out: 1" in t for t in titles), titles
    assert any("stale: 1" in t for t in titles), titles
    assert "2 project memories cite code" in html


def test_an_empty_store_says_so_instead_of_drawing(tmp_path: Path, monkeypatch) -> None:
    from store.store import Store

    (tmp_path / "empty" / ".engram" / "memory").mkdir(parents=True)
    store = Store(tmp_path / "empty", background=False)
    ui = Ui(app(store))
    ui.login()
    html = ui.html("/overview")
    assert "No memories yet." in html and "<svg" not in html
    store.close()
