"""Issue 23, Build 4: near-duplicate pairs on the page, with a merge proposal or a retire."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.store import Store
from tests.support.store_helpers import write_memory
from tests.ui.conftest import Ui, app

TAX = "Round the tax on each invoice line before summing the lines, never on the total."


@pytest.fixture
def twins(ws: Path) -> Iterator[Ui]:
    write_memory(
        ws,
        "tax-per-line",
        title="Tax is rounded per invoice line <b>x</b>",
        body=TAX + " Totals show two decimals.\n",
        updated="2026-01-01T00:00:00Z",
    )
    write_memory(
        ws,
        "line-tax-rounding",
        title="Tax rounded per invoice line <b>x</b>",
        body=TAX + "\n\nThe Stripe webhook replays use the same rounding helper.\n",
        updated="2026-03-01T00:00:00Z",
    )
    store = Store(ws, background=False)
    ui = Ui(app(store))
    assert ui.login().status_code == 303
    yield ui
    store.close()


def _settled(ui: Ui, path: str = "/duplicates") -> str:
    """The page once the pairs are found (it reloads itself until then)."""
    deadline = time.monotonic() + 20
    while True:
        html = ui.html(path)
        if "Looking for pairs" not in html or time.monotonic() > deadline:
            return html
        time.sleep(0.05)


def test_the_pairs_page_says_it_is_looking_then_lists_the_pair(twins: Ui) -> None:
    first = twins.html("/duplicates")
    assert "Looking for pairs" in first and '<meta http-equiv="refresh" content="2">' in first
    html = _settled(twins)
    assert "http-equiv" not in html
    assert "/memory/tax-per-line" in html and "/memory/line-tax-rounding" in html
    assert "Propose a merge" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert "use-uv" not in html  # not a duplicate of anything


def test_the_list_and_the_memory_page_mark_the_pair_once_found(twins: Ui) -> None:
    _settled(twins)
    listed = twins.html("/")
    assert "near-duplicate of line-tax-rounding" in listed and "near-duplicate of tax-per-line" in listed
    assert "near-duplicate of" in twins.html("/memory/line-tax-rounding")
    assert "near-duplicate of" not in twins.html("/memory/use-uv")


def test_a_merge_is_proposed_and_waits_on_the_pending_page_with_its_diff(twins: Ui, ws: Path) -> None:
    _settled(twins)
    before = (ws / ".engram" / "memory" / "tax-per-line.md").read_bytes()
    done = twins.post("/duplicates/merge", {"keeper": "tax-per-line", "other": "line-tax-rounding"})
    assert done.status_code == 200, done.get_data(as_text=True)
    text = done.get_data(as_text=True)
    assert "Proposed merging line-tax-rounding into tax-per-line (verdict UPDATE)" in text
    assert (ws / ".engram" / "memory" / "tax-per-line.md").read_bytes() == before  # proposed, not written
    pending = twins.html("/pending")
    assert "UPDATE" in pending and "Stripe webhook replays" in pending
    assert "+ | The Stripe webhook replays use the same rounding helper." in pending


def test_a_merge_of_two_memories_that_are_no_pair_is_refused(twins: Ui) -> None:
    _settled(twins)
    refused = twins.post("/duplicates/merge", {"keeper": "use-uv", "other": "tax-per-line"})
    assert refused.status_code == 409
    assert "not a near-duplicate pair" in refused.get_data(as_text=True)
    assert "ENGRAM_NOT_FOUND" in twins.post("/duplicates/merge", {"keeper": "nope", "other": "x"}).get_data(
        as_text=True
    )


def test_a_merge_without_the_csrf_token_is_refused(twins: Ui, ws: Path) -> None:
    _settled(twins)
    refused = twins.open(
        "/duplicates/merge", method="POST", data={"keeper": "tax-per-line", "other": "line-tax-rounding"}
    )
    assert refused.status_code == 403
    assert "Proposed merging" not in twins.html("/pending") and "Stripe webhook" not in twins.html("/pending")


def test_a_pair_whose_words_one_holds_offers_no_one_click_retire(ws: Path) -> None:
    """Attack round: "Never run the scanner before a push" holds every word of "Run the scanner
    before every push", and the page offered to retire the real memory in one click because the
    other "already says all it says". Words cannot tell never from always: the page says to read
    both, and retiring is done from a memory's own page, with the terminal's approval code."""
    write_memory(
        ws,
        "scan-before-push",
        title="Run the secret scanner before every push",
        body="Run the secret scanner (gitleaks) before every push.\n",
    )
    write_memory(
        ws,
        "scanner-note",
        title="Run the secret scanner before every push",
        body="Never run the secret scanner (gitleaks) before every push: it is not needed.\n",
    )
    store = Store(ws, background=False)
    ui = Ui(app(store))
    ui.login()
    html = _settled(ui)
    store.close()
    assert "scan-before-push" in html and "scanner-note" in html
    assert "/retire" not in html
    assert "words alone do not tell" in html
