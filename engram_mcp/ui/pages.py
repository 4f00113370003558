"""The page's addresses and their handlers (each takes the Page and the request, returns a Response).

The rest, and why: docs/design.md, `engram_mcp/ui/pages.py`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Final
from urllib.parse import urlencode

from werkzeug.wrappers import Request, Response

from engram_mcp.ops.wording import cli_wording
from engram_mcp.ui import pairs
from engram_mcp.ui.listing import PAGE_SIZE, SCOPE_CHOICES, STATUS_CHOICES, TYPE_CHOICES, Filters, listing
from engram_mcp.ui.webapp import Handler, Page
from store.code.staleness import describe
from store.errors import StoreError


def index(page: Page, request: Request) -> Response:
    filters = Filters.of(request.args, request.args.getlist("type"))
    try:
        found = listing(page.store, filters)
    except StoreError as exc:
        return page.problem(400, exc.code, exc.text(cli_wording))
    return page.render(
        "index.html",
        filters=filters,
        listing=found,
        page_size=PAGE_SIZE,
        types=TYPE_CHOICES,
        scopes=SCOPE_CHOICES,
        statuses=STATUS_CHOICES,
        describe=describe,
        link=_page_link(filters),
        near=pairs.finder(page).marked(page.store),
    )


def _page_link(filters: Filters) -> Callable[[int], str]:
    """The list's address for page `n` with the same filters."""

    def link(n: int) -> str:
        pairs = [("type", t) for t in filters.types]
        pairs += [(k, v) for k, v in (("scope", filters.scope), ("tag", filters.tag)) if v]
        pairs += [("status", filters.status)] if filters.status != "active" else []
        pairs += [("page", str(n))]
        return "/?" + urlencode(pairs)

    return link


def _later(module: str, name: str) -> Handler:
    """The handler `name` of engram_mcp.ui.`module`, imported at its first request: the first
    page (the list) then imports none of the other pages (markdown, the diff, doctor), which
    `make bench`'s `ui_first_page` counts."""

    def handler(page: Page, request: Request, **values: str) -> Response:
        found: Handler = getattr(importlib.import_module(f"engram_mcp.ui.{module}"), name)
        return found(page, request, **values)

    return handler


ROUTES: Final[tuple[tuple[str, str, Handler], ...]] = (
    ("/", "GET", index),
    ("/memory/<name>", "GET", _later("memory_actions", "memory")),
    ("/memory/<name>/retire", "POST", _later("memory_actions", "retire")),
    ("/memory/<name>/restore", "POST", _later("memory_actions", "restore")),
    ("/pending", "GET", _later("pending_page", "pending")),
    ("/pending/<ref>", "POST", _later("pending_page", "decide")),
    ("/duplicates", "GET", _later("duplicates_page", "duplicates")),
    ("/duplicates/merge", "POST", _later("duplicates_page", "merge")),
    ("/overview", "GET", _later("overview_page", "overview")),
    ("/health", "GET", _later("health_page", "health")),
)
