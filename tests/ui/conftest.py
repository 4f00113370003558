"""`engram ui` in-process: the WSGI application driven by werkzeug's test client (no browser,
no socket), on a small workspace of its own."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from engram_mcp.ui.approval_code import ApprovalCode
from engram_mcp.ui.pages import ROUTES
from engram_mcp.ui.security import Guard
from engram_mcp.ui.webapp import UiApp
from store.store import Store
from tests.support.store_helpers import write_memory

PORT = 8765
ORIGIN = f"http://127.0.0.1:{PORT}"
GUARD = Guard(PORT, key="k" * 43, session="s" * 43, csrf="c" * 43)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with three memories; the current folder."""
    root = tmp_path / "ws"
    (root / ".engram" / "memory").mkdir(parents=True)
    write_memory(root, "use-uv", title="Use uv for installs", body="Run `uv pip install`.\n", tags=["python"])
    write_memory(
        root,
        "tax-rounding",
        title="Tax is rounded per line",
        body="Round **each line** before summing.\n",
        type="decision",
        refs=["api/tax.py"],
    )
    write_memory(root, "old-port", title="The old port", body="Port 5432.\n", status="retired")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def store(ws: Path) -> Iterator[Store]:
    opened = Store(ws, background=False)
    try:
        yield opened
    finally:
        opened.close()


class Ui:
    """A test client of the page, and the launch's secrets."""

    def __init__(self, app: UiApp) -> None:
        self.app = app
        self.client = Client(app)
        self.guard = GUARD

    def open(self, path: str, method: str = "GET", **kwargs: Any) -> TestResponse:
        kwargs.setdefault("base_url", ORIGIN)
        return self.client.open(path, method=method, **kwargs)

    def login(self) -> TestResponse:
        return self.open(f"/?key={GUARD.key}")

    def get(self, path: str, **kwargs: Any) -> TestResponse:
        return self.open(path, **kwargs)

    def post(self, path: str, data: dict[str, Any] | None = None, **kwargs: Any) -> TestResponse:
        """A post of the page's form: its CSRF token and the approval code the terminal shows now."""
        form = {"csrf": GUARD.csrf, "code": self.app.page.code.current, **(data or {})}
        return self.open(path, method="POST", data=form, **kwargs)

    def html(self, path: str) -> str:
        response = self.get(path)
        assert response.status_code == 200, response.get_data(as_text=True)
        return response.get_data(as_text=True)


class Terminal:
    """What `engram ui` would print in its terminal about the approval codes after the first."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)


def app(store: Store, *, approvals: str | None = None) -> UiApp:
    """The page's application for `store`, as `engram ui` makes it (its codes said to no terminal),
    with GUARD's secrets and a key not used yet."""
    return UiApp(store, replace(GUARD), ROUTES, code=ApprovalCode(Terminal()), approvals=approvals)


@pytest.fixture
def ui(store: Store) -> Ui:
    """A page for `store`, its cookie not yet set."""
    return Ui(app(store))


@pytest.fixture
def page(ui: Ui) -> Ui:
    """A page whose browser has opened the launch's URL (the cookie is set)."""
    assert ui.login().status_code == 303
    return ui
