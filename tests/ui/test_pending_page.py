"""Pending proposals, in full (issue 23, Build 2): every candidate with its verdict, fields,
body and, for an UPDATE, the diff against the memory it changes; one form per proposal."""

from __future__ import annotations

import re

from store.store import Store
from tests.support.proposals import candidate, propose
from tests.ui.conftest import Ui


def test_no_proposal_says_so(page: Ui) -> None:
    assert "No proposal is waiting for approval." in page.html("/pending")


def test_every_candidate_is_shown_in_full(page: Ui, store: Store) -> None:
    preview = propose(
        store,
        [
            candidate(tags=["ops"], paths=["ops/**"]),
            candidate(
                "Use uv for installs",
                "Run `uv sync` instead; never `pip install`.",
                id="use-uv",
                tags=["tooling"],
            ),
            candidate("A key", "The deploy key is AKIAIOSFODNN7EXAMPLE here."),
        ],
    )
    html = page.html("/pending")
    ref = preview.token and re.search(r'action="/pending/([0-9a-f]{12})"', html)
    assert ref, html
    assert html.count('name="candidate"') == 3
    assert "1. ADD" in html and "2. UPDATE use-uv" in html
    assert "Frobnicate the quux widgets nightly" in html
    assert "wobbegong cache half warm" in html  # the body, whole
    assert "ops/**" in html and "ops" in html
    assert "1 redaction" in html and "[REDACTED]" in html and "AKIAIOSFODNN7EXAMPLE" not in html
    # the UPDATE's diff against the memory it rewrites, with the mark of what it drops
    assert "rewrites use-uv" in html
    assert "- | Run `uv pip install`." in html
    assert "+ | Run `uv sync` instead; never `pip install`." in html
    assert "! this update drops 1 line of the body and the tag python" in html
    assert "Save the checked ones" in html and "Decline the checked ones" in html
    assert 'name="csrf" value="' + page.guard.csrf + '"' in html
    assert preview.token not in html  # the page never shows (or has) the token


def test_a_planted_body_in_a_proposal_never_runs(page: Ui, store: Store) -> None:
    propose(
        store,
        [
            candidate(
                "Hostile <script>alert(1)</script>", "<img src=x onerror=alert(1)> [x](javascript:alert(2))"
            )
        ],
    )
    for path in ("/pending", "/pending?as=text"):
        html = page.html(path).lower()
        assert "<script" not in html and "<img" not in html
        assert 'href="javascript:' not in html


def test_a_page_started_in_an_agents_shell_says_it_will_not_approve(store: Store) -> None:
    from engram_mcp.ui.pages import ROUTES
    from engram_mcp.ui.webapp import UiApp
    from tests.ui.conftest import GUARD

    propose(store, [candidate()])
    ui = Ui(UiApp(store, GUARD, ROUTES, approvals="started from an agent's shell"))
    ui.login()
    html = ui.html("/pending")
    assert "ENGRAM_AGENT_SHELL" in html and "started from an agent&#39;s shell" in html
    assert re.search(r'<button type="submit" name="action" value="save" disabled>', html)
