"""`/pending`: the proposals waiting for approval (engram_mcp.ui: build step 3)."""

from __future__ import annotations

from werkzeug.wrappers import Request, Response

from engram_mcp.ui.webapp import Page
from store.write import curate


def pending(page: Page, request: Request) -> Response:
    return page.render("pending.html", proposals=curate.pending(page.store))


def decide(page: Page, request: Request, ref: str) -> Response:
    return page.problem(
        501, "ENGRAM_UI_NOT_YET", "approving on this page is not built yet; use `engram commit`"
    )
