"""`/duplicates`: pairs of memories that say nearly the same thing, each with its way out: a merge
proposal (`POST /duplicates/merge`), or retiring the one whose every word the other holds.

The pairs are found off the request path (engram_mcp.ui.pairs); until they are, the page says
so and reloads itself (a `<meta http-equiv="refresh">`: the page runs no script).

The merge is proposed, not written: it goes through the proposal path (verdict, diff) and waits
on the pending page for the person's Save, like every other proposal (origin `ui:merge`).
"""

from __future__ import annotations

from typing import Final

from werkzeug.wrappers import Request, Response

from engram_mcp.ops.wording import cli_wording
from engram_mcp.ui.memory_view import lookup
from engram_mcp.ui.pairs import finder
from engram_mcp.ui.webapp import Page
from store.code.staleness import key
from store.errors import StoreError
from store.files.memory import Memory
from store.propose.near_duplicates import merge_candidate
from store.write import proposals

ORIGIN: Final = "ui:merge"
RELOAD_SECONDS: Final = 2


def duplicates(page: Page, request: Request) -> Response:
    pairs, current = finder(page).pairs(page.store)
    looking = pairs is None or not current
    return page.render(
        "duplicates.html",
        pairs=pairs or [],
        looking=looking,
        reload=RELOAD_SECONDS if looking else None,
        key=key,
        counted=len(page.store.view().durable),
    )


def merge(page: Page, request: Request) -> Response:
    """Propose the merge of one pair the page listed (the two memories named by their keys)."""
    try:
        first, second = (
            lookup(page.store, request.form.get("keeper", "")),
            lookup(page.store, request.form.get("other", "")),
        )
    except StoreError as exc:
        return page.problem(404 if exc.code == "ENGRAM_NOT_FOUND" else 400, exc.code, exc.text(cli_wording))
    pairs, _ = finder(page).pairs(page.store)
    pair = next((p for p in pairs or [] if _same(p.keeper, first) and _same(p.other, second)), None)
    if pair is None:
        return page.problem(
            409,
            "ENGRAM_VALIDATION",
            "these two are not a near-duplicate pair of the store as it is now: open the pairs page "
            "again and merge from there",
        )
    try:
        entries, redactions = proposals.draft(page.store, [merge_candidate(pair)])
        preview = proposals.store_proposal(page.store, entries, redactions, ORIGIN)
    except StoreError as exc:
        return page.problem(409, exc.code, exc.text(cli_wording))
    verdict = preview.candidates[0].verdict
    text = (
        f"Proposed merging {second.id} into {first.id} (verdict {verdict.kind}): review it on the "
        f"pending page and save it there. Once it is saved, {first.id} says all {second.id} says: "
        f"retire {second.id} from its page."
    )
    return page.render("done.html", text=text, back="/pending", back_text="Review it on the pending page")


def _same(listed: Memory, now: Memory) -> bool:
    """The memory the pairs page listed is this one, unchanged since."""
    return (listed.scope, listed.id, listed.hash) == (now.scope, now.id, now.hash)
