"""A memory's page (`GET /memory/<key>`) and its writes, Retire and Restore (`POST
/memory/<key>/retire`, `/restore`), each with the terminal's approval code. Its own module, so
the first page (the list) does not import markdown-it and nh3 (engram_mcp.ui.pages `_later`).
"""

from __future__ import annotations

from werkzeug.wrappers import Request, Response

from engram_mcp.ops.wording import cli_wording
from engram_mcp.ui import pairs
from engram_mcp.ui.memory_view import address, memory_page
from engram_mcp.ui.render import hides_text, markdown
from engram_mcp.ui.webapp import Page
from store.code.staleness import describe, key
from store.errors import StoreError
from store.write import curate


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
        near=pairs.finder(page).marked(page.store).get(shown.key),
        key_of=key,
    )


def _status(page: Page, request: Request, name: str, status: str) -> Response:
    """Retire or restore: the store call `engram forget` / `engram restore` make, with the
    terminal's approval code (engram_mcp.ui.approval_code)."""
    verb = "retire" if status == "retired" else "restore"
    if (refused := page.unapproved(request, f"{verb} {_said(name)}")) is not None:
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


def _said(name: str) -> str:
    """A page address as the terminal's "code used to …" line names it: only a well-formed one
    (a cookie holder padded a name with spaces until it wrapped into a
    forged line of that record)."""
    try:
        address(name)
    except StoreError:
        return "an address that names no memory"
    return name
