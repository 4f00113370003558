"""The page's doors (issue 23, Build 6; engram_mcp.ui.security): each refused when broken and
allowed when right, and the headers on every response."""

from __future__ import annotations

import pytest
from werkzeug.test import Client, TestResponse

from engram_mcp.ui.security import (
    CSRF_CODE,
    HEADERS,
    HOST_CODE,
    KEY_CODE,
    METHOD_CODE,
    ORIGIN_CODE,
    Guard,
)
from store.store import Store
from tests.ui.conftest import ORIGIN, PORT, Ui, app

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def _refused(response: TestResponse, status: int, code: str) -> None:
    assert response.status_code == status, response.get_data(as_text=True)
    assert code in response.get_data(as_text=True)
    assert "use-uv" not in response.get_data(as_text=True)  # no memory reaches a refused request


def _no_cors(response: TestResponse) -> None:
    assert not [name for name, _ in response.headers.items() if name.lower().startswith("access-control-")]


# --- the key and the cookie ------------------------------------------------------------------


def test_the_launch_url_sets_an_httponly_strict_cookie_and_redirects_without_the_key(ui: Ui) -> None:
    """Issue 23: the secret is in the URL once, then held in an HttpOnly, SameSite=Strict cookie."""
    response = ui.open(f"/?key={ui.guard.key}&status=all")
    assert response.status_code == 303
    assert response.headers["Location"] == "/?status=all"
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(f"engram_ui_{PORT}={ui.guard.session};")
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "path"} <= attributes and "domain" not in attributes
    assert "SameSite=Strict" in cookie and "Path=/" in cookie
    assert ui.guard.key not in cookie  # the cookie is a value of its own, not the URL's key
    assert ui.get("/").status_code == 200


def test_a_redirect_never_leaves_the_page(ui: Ui) -> None:
    """engram's own choice: `//elsewhere?key=…` redirects to a path of this page, not another site."""
    for path in ("//evil.example/x", "/\\evil.example/x", "///evil.example"):
        response = ui.open(f"/?key={ui.guard.key}", environ_overrides={"PATH_INFO": path})
        assert response.status_code == 303
        location = response.headers["Location"]
        assert location.startswith("/") and not location.startswith(("//", "/\\")), location


@pytest.mark.parametrize("path", ["/", "/memory/use-uv", "/pending", "/health", "/static/engram.css"])
def test_every_page_needs_the_cookie(ui: Ui, path: str) -> None:
    """Issue 23: a missing secret is refused, with the page saying to use the URL engram ui printed."""
    response = ui.get(path)
    _refused(response, 403, KEY_CODE)
    assert "engram ui" in response.get_data(as_text=True)


def test_a_wrong_key_is_refused_and_sets_no_cookie(ui: Ui) -> None:
    for wrong in ("k" * 42, "k" * 44, "", "ké" * 20, ui.guard.session):
        response = ui.open(f"/?key={wrong}")
        _refused(response, 403, KEY_CODE)
        assert "Set-Cookie" not in response.headers
    assert ui.get("/").status_code == 403


def test_a_wrong_cookie_is_refused(ui: Ui) -> None:
    ui.client.set_cookie(f"engram_ui_{PORT}", "s" * 42, domain="127.0.0.1")
    _refused(ui.get("/"), 403, KEY_CODE)
    ui.client.set_cookie(f"engram_ui_{PORT}", ui.guard.key, domain="127.0.0.1")  # the key is not the cookie
    _refused(ui.get("/"), 403, KEY_CODE)
    ui.client.set_cookie(f"engram_ui_{PORT}", ui.guard.session, domain="127.0.0.1")
    assert ui.get("/").status_code == 200


def test_another_launchs_cookie_is_refused(ui: Ui) -> None:
    """A cookie of a launch on another port (cookies are shared by every port of a host)."""
    ui.client.set_cookie(f"engram_ui_{PORT + 1}", ui.guard.session, domain="127.0.0.1")
    _refused(ui.get("/"), 403, KEY_CODE)


def test_each_launch_makes_fresh_secrets() -> None:
    one, two = Guard(PORT), Guard(PORT)
    assert len({one.key, one.session, one.csrf, two.key, two.session, two.csrf}) == 6
    assert all(len(secret) >= 43 for secret in (one.key, one.session, one.csrf))
    assert one.url == f"http://127.0.0.1:{PORT}/?key={one.key}"


# --- the Host header (DNS rebinding) -------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        f"evil.example:{PORT}",
        "127.0.0.1",
        f"127.0.0.1:{PORT + 1}",
        f"localhost.evil.example:{PORT}",
        f"127.0.0.2:{PORT}",
        f"[::1]:{PORT}",
        f"0.0.0.0:{PORT}",
        f"LOCALHOST:{PORT}x",
    ],
)
def test_a_foreign_host_is_refused_even_with_the_cookie(page: Ui, host: str) -> None:
    """Issue 23: any Host header but its own is refused (DNS rebinding)."""
    response = page.get("/", headers={"Host": host})
    _refused(response, 421, HOST_CODE)
    response = page.open(f"/?key={page.guard.key}", headers={"Host": host})
    _refused(response, 421, HOST_CODE)
    assert "Set-Cookie" not in response.headers


def test_localhost_with_the_port_is_the_page_too(ui: Ui) -> None:
    response = ui.open(f"/?key={ui.guard.key}", base_url=f"http://localhost:{PORT}")
    assert response.status_code == 303
    assert ui.get("/", base_url=f"http://localhost:{PORT}").status_code == 200


def test_the_key_works_once(store: Store) -> None:
    """Attack round, issue 23: the browser's history keeps the URL, and an agent of the same user
    read it there and opened a session of its own. The first use spends the key; the browser
    holding the session may open the URL again."""
    human = Ui(app(store))
    assert human.login().status_code == 303
    assert human.login().status_code == 303  # the same browser again: still its session
    agent = Ui(human.app)
    agent.client = Client(human.app)  # another client: no cookie
    response = agent.login()
    _refused(response, 403, KEY_CODE)
    assert "works once" in response.get_data(as_text=True)
    assert "Set-Cookie" not in response.headers


# --- writes: origin, fetch metadata, CSRF --------------------------------------------------------


def test_a_write_from_the_page_itself_is_allowed(page: Ui) -> None:
    response = page.post("/memory/use-uv/retire", headers={"Origin": ORIGIN, "Sec-Fetch-Site": "same-origin"})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert "Retired use-uv" in response.get_data(as_text=True)


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", f"http://localhost:{PORT}", f"{ORIGIN}.evil"]
)
def test_a_write_from_another_origin_is_refused(page: Ui, origin: str) -> None:
    """Issue 23: any cross-origin request is refused, with the right CSRF token too."""
    response = page.post("/memory/use-uv/retire", headers={"Origin": origin})
    _refused(response, 403, ORIGIN_CODE)
    assert "retired" not in page.html("/memory/use-uv").split("<h2>Body")[0]


@pytest.mark.parametrize("site", ["cross-site", "same-site", "none"])
def test_a_write_another_site_started_is_refused(page: Ui, site: str) -> None:
    response = page.post("/memory/use-uv/retire", headers={"Sec-Fetch-Site": site})
    _refused(response, 403, ORIGIN_CODE)


@pytest.mark.parametrize("token", [None, "", "c" * 42, "c" * 44, "s" * 43, "ç" * 43])
def test_a_write_without_this_launchs_csrf_token_is_refused(page: Ui, token: str | None) -> None:
    """Issue 23: a missing or wrong CSRF token is refused (the cookie alone is not enough)."""
    data = {} if token is None else {"csrf": token}
    response = page.open("/memory/use-uv/retire", method="POST", data=data)
    _refused(response, 403, CSRF_CODE)


def test_a_write_without_the_cookie_is_refused_whatever_it_carries(ui: Ui) -> None:
    response = ui.post("/memory/use-uv/retire", headers={"Origin": ORIGIN, "Sec-Fetch-Site": "same-origin"})
    _refused(response, 403, KEY_CODE)
    response = ui.post(f"/memory/use-uv/retire?key={ui.guard.key}")
    _refused(response, 403, KEY_CODE)


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"])
def test_other_methods_are_refused(page: Ui, method: str) -> None:
    response = page.open("/memory/use-uv/retire", method=method, headers={"Origin": "http://evil.example"})
    _refused(response, 405, METHOD_CODE)
    _no_cors(response)


def test_a_get_of_a_write_address_writes_nothing(page: Ui) -> None:
    response = page.get("/memory/use-uv/retire")
    assert response.status_code == 405
    assert "Retire" in page.html("/memory/use-uv")  # still active


def test_an_oversized_form_is_refused(page: Ui) -> None:
    response = page.post("/memory/use-uv/retire", {"pad": "x" * 100_000})
    assert response.status_code == 413


# --- headers on every response ---------------------------------------------------------------------


def test_every_response_carries_the_csp_and_no_cors(ui: Ui) -> None:
    """Issue 23: a strict CSP (no script at all) and no CORS headers, on every response: pages,
    refusals of each kind, redirects, the stylesheet, errors."""
    responses = [
        ui.get("/"),
        ui.get("/", headers={"Host": "evil.example", "Origin": "http://evil.example"}),
        ui.open(f"/?key={ui.guard.key}"),
        ui.get("/"),
        ui.get("/memory/use-uv"),
        ui.get("/memory/no-such"),
        ui.get("/memory/Not_An_Id"),
        ui.get("/nowhere"),
        ui.get("/pending"),
        ui.get("/health"),
        ui.get("/static/engram.css"),
        ui.open("/", method="HEAD"),
        ui.open("/", method="OPTIONS", headers={"Origin": "http://evil.example"}),
        ui.post("/memory/use-uv/retire", headers={"Origin": "http://evil.example"}),
        ui.post("/memory/use-uv/retire", {"csrf": "wrong"}),
        ui.post("/memory/use-uv/retire"),
    ]
    statuses = {r.status_code for r in responses}
    assert {200, 303, 403, 404, 405, 421} <= statuses
    for response in responses:
        assert response.headers["Content-Security-Policy"] == CSP
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "same-origin"
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["X-Frame-Options"] == "DENY"
        for name, value in HEADERS:
            assert response.headers[name] == value
        _no_cors(response)


def test_no_page_holds_a_script_or_an_inline_style(page: Ui) -> None:
    """The CSP allows no script and only the page's own stylesheet: the pages use neither."""
    for path in ("/", "/?q=uv", "/memory/tax-rounding", "/pending", "/health"):
        html = page.html(path).lower()
        assert "<script" not in html and "style=" not in html and "<style" not in html
        assert " on" + "click=" not in html


def test_the_stylesheet_is_served_as_css(page: Ui) -> None:
    response = page.get("/static/engram.css")
    assert response.status_code == 200
    assert response.mimetype == "text/css"
