"""The page's addresses and their handlers (each takes the Page and the request, returns a Response).

| address | what |
| --- | --- |
| `GET /` | the memories: filters, search, marks (engram_mcp.ui.listing) |
| `GET /memory/<key>` | one memory: body, front matter, refs, history (engram_mcp.ui.memory_view) |
| `POST /memory/<key>/retire`, `/restore` | what `engram forget ID` / `engram restore ID` do |
| `GET /pending` | the proposals waiting for approval, every candidate in full |
| `POST /pending/<ref>` | save or decline the checked candidates of one proposal |
| `GET /duplicates` | near-duplicate pairs, each with a merge to propose or one to retire |
| `POST /duplicates/merge` | propose the merge of one pair (it waits on `/pending`) |
| `GET /overview` | pictures: memories by type and age, freshness against the cited code |
| `GET /health` | doctor's and verify's findings, each with its fix |

A write answers with a page saying what happened (no redirect carrying a message a link could
forge). Store errors become a page with their code and fix, worded for the person (the CLI's
words: they name commands to run in a terminal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final
from urllib.parse import urlencode

from werkzeug.wrappers import Request, Response

from engram_mcp.cli.common import cli_wording
from engram_mcp.ui import duplicates_page, health_page, overview_page, pending_page
from engram_mcp.ui.listing import PAGE_SIZE, SCOPE_CHOICES, STATUS_CHOICES, TYPE_CHOICES, Filters, listing
from engram_mcp.ui.memory_view import memory_page
from engram_mcp.ui.render import hides_text, markdown
from engram_mcp.ui.webapp import Handler, Page
from store.code.staleness import describe, key
from store.errors import StoreError
from store.safety import untrusted
from store.write import curate


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
        near=duplicates_page.finder(page).marked(page.store),
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


def memory(page: Page, request: Request, name: str) -> Response:
    try:
        shown = memory_page(page.store, name)
    except StoreError as exc:
        status = 404 if exc.code == "ENGRAM_NOT_FOUND" else 400
        return page.problem(status, exc.code, exc.text(cli_wording))
    raw = request.args.get("as") == "text"
    rendered = None if raw else markdown(shown.body)
    return page.render(
        "memory.html",
        shown=shown,
        raw=raw,
        body=shown.body if rendered is None else rendered,
        hides=rendered is not None and hides_text(shown.body, rendered),
        describe=describe,
        near=duplicates_page.finder(page).marked(page.store).get(shown.key),
        key_of=key,
    )


def _status(page: Page, request: Request, name: str, status: str) -> Response:
    """Retire or restore: the store call `engram forget` / `engram restore` make, with the
    terminal's approval code (engram_mcp.ui.approval_code)."""
    verb = "retire" if status == "retired" else "restore"
    if (refused := page.unapproved(request, f"{verb} {untrusted.line(name, 200)}")) is not None:
        return refused
    try:
        if name.startswith(("user:", "note:")):  # curate names memories as the CLI does: by id
            found = memory_page(page.store, name)
            if not found.curated:
                return page.problem(
                    409,
                    "ENGRAM_VALIDATION",
                    f"{name} is not the memory `engram forget {found.memory.id}` would name; retire it "
                    "from its own page",
                )
            name = found.memory.id
        change = curate.set_status(page.store, name, status)
    except StoreError as exc:
        return page.problem(409 if exc.code != "ENGRAM_NOT_FOUND" else 404, exc.code, exc.text(cli_wording))
    address = change.id if change.scope == "project" else f"user:{change.id}"
    if status == "retired":
        text = (
            f"Retired {change.id} ({change.file}): the file is kept and reads leave it out."
            if change.changed
            else f"{change.id} is already retired."
        )
    else:
        text = (
            f"Restored {change.id} ({change.file}): reads include it again."
            if change.changed
            else f"{change.id} is active already; nothing changed."
        )
    return page.render("done.html", text=text, back=f"/memory/{address}", back_text=f"Back to {change.id}")


def retire(page: Page, request: Request, name: str) -> Response:
    return _status(page, request, name, "retired")


def restore(page: Page, request: Request, name: str) -> Response:
    return _status(page, request, name, "active")


ROUTES: Final[tuple[tuple[str, str, Handler], ...]] = (
    ("/", "GET", index),
    ("/memory/<name>", "GET", memory),
    ("/memory/<name>/retire", "POST", retire),
    ("/memory/<name>/restore", "POST", restore),
    ("/pending", "GET", pending_page.pending),
    ("/pending/<ref>", "POST", pending_page.decide),
    ("/duplicates", "GET", duplicates_page.duplicates),
    ("/duplicates/merge", "POST", duplicates_page.merge),
    ("/overview", "GET", overview_page.overview),
    ("/health", "GET", health_page.health),
)
