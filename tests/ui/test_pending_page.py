"""Pending proposals, in full (issue 23, Build 2): every candidate with its verdict, fields,
body and, for an UPDATE, the diff against the memory it changes; one form per proposal."""

from __future__ import annotations

import re
from pathlib import Path

from store.store import Store
from store.write.approvals import Pending
from tests.support.proposals import candidate, propose
from tests.ui.conftest import Ui, app


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

    propose(store, [candidate()])
    ui = Ui(app(store, approvals="started from an agent's shell"))
    ui.login()
    html = ui.html("/pending")
    assert "ENGRAM_AGENT_SHELL" in html and "started from an agent&#39;s shell" in html
    assert re.search(r'<button type="submit" name="action" value="save" disabled>', html)


# --- saving and declining ------------------------------------------------------------------------------


def _ref(html: str) -> str:
    found = re.search(r'action="/pending/([0-9a-f]{12})"', html)
    assert found, html
    return found.group(1)


def _decide(page: Ui, ref: str, action: str, *numbers: int) -> str:
    response = page.post(f"/pending/{ref}", {"action": action, "candidate": [str(n) for n in numbers]})
    text = response.get_data(as_text=True)
    assert response.status_code == 200, text
    return text


THREE = [
    candidate("Frobnicate the quux widgets nightly"),
    candidate("Deploys freeze on Fridays", "No deploys after noon on Fridays; the on-call rota is thin."),
    candidate("Glimmer caches are warmed at dawn", "The wobbegong warms glimmer caches at 05:00 sharp."),
]


def test_saving_two_of_three_keeps_the_third_pending_then_declining_it_closes_the_proposal(
    ws: Path, page: Ui, store: Store
) -> None:
    """Issue 23: approve selected candidates, decline the rest, or leave them pending; written
    through the commit path, recorded as decided in engram ui."""
    propose(store, THREE)
    ref = _ref(page.html("/pending"))
    said = _decide(page, ref, "save", 1, 3)
    assert "Saved 2 memories" in said
    assert "Still pending: candidate 2" in said
    memory = ws / ".engram" / "memory"
    assert (memory / "frobnicate-the-quux-widgets-nightly.md").exists()
    assert (memory / "glimmer-caches-are-warmed-at-dawn.md").exists()
    html = page.html("/pending")
    assert html.count('name="candidate"') == 1 and "Deploys freeze on Fridays" in html
    assert "Frobnicate the quux" not in html
    said = _decide(page, ref, "decline", 2)
    assert "Declined candidate 2" in said
    assert not (memory / "deploys-freeze-on-fridays.md").exists()
    assert "No proposal is waiting for approval." in page.html("/pending")
    record = next(iter(Pending.read(store.project.pending_path, store.key).records.values()))
    assert {d["where"] for d in record["decided"].values()} == {"ui"}


def test_saving_writes_what_verify_accepts_as_engrams_own(page: Ui, store: Store) -> None:
    from store.write import review

    review.accept(store)
    propose(store, THREE[:1])
    _decide(page, _ref(page.html("/pending")), "save", 1)
    assert review.verify(store)["unindexed"] == [] and review.verify(store)["mismatched"] == []


def test_a_decision_needs_a_ticked_candidate_and_the_pages_own_buttons(page: Ui, store: Store) -> None:
    propose(store, THREE)
    ref = _ref(page.html("/pending"))
    for form, code in (
        ({"action": "save"}, "ENGRAM_VALIDATION"),
        ({"action": "publish", "candidate": "1"}, "ENGRAM_VALIDATION"),
        ({"action": "save", "candidate": "x"}, "ENGRAM_VALIDATION"),
        ({"action": "save", "candidate": "9"}, "ENGRAM_VALIDATION"),
    ):
        response = page.post(f"/pending/{ref}", form)
        assert response.status_code in (400, 409), form
        assert code in response.get_data(as_text=True), form
    assert page.html("/pending").count('name="candidate"') == 3  # nothing was decided


def test_a_closed_proposal_cannot_be_decided_again(page: Ui, store: Store) -> None:
    propose(store, THREE[:1])
    ref = _ref(page.html("/pending"))
    _decide(page, ref, "save", 1)
    response = page.post(f"/pending/{ref}", {"action": "save", "candidate": "1"})
    assert response.status_code == 409
    assert "ENGRAM_TOKEN_USED" in response.get_data(as_text=True)
    assert page.post("/pending/not-a-ref", {"action": "save", "candidate": "1"}).status_code == 404


def test_a_page_started_in_an_agents_shell_refuses_to_save(ws: Path, store: Store) -> None:
    """engram's own choice: the agent that reads the printed URL must not approve its own
    proposal; declining is still the human's (it writes nothing)."""

    propose(store, THREE[:1])
    ui = Ui(app(store, approvals="started from an agent's shell"))
    ui.login()
    ref = _ref(ui.html("/pending"))
    response = ui.post(f"/pending/{ref}", {"action": "save", "candidate": "1"})
    assert response.status_code == 403 and "ENGRAM_AGENT_SHELL" in response.get_data(as_text=True)
    assert not (ws / ".engram" / "memory" / "frobnicate-the-quux-widgets-nightly.md").exists()
