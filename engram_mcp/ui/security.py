"""The page's doors, checked before any handler runs: built as if every other site
and every other local process were hostile (claude-mem's worker served memory with CORS `*`
and unauthenticated writes; mcp-memory-service had a missing-auth CVE).

The rest, and why: docs/design.md, `engram_mcp/ui/security.py`.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import quote, urlencode

from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Request

HEADERS: Final = (
    (
        "Content-Security-Policy",
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    # same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` on the
    # page's own form posts (Chromium does), which the origin check must refuse; other sites
    # still get no Referer at all (and the URL never holds the key after the first redirect)
    ("Referrer-Policy", "same-origin"),
    ("Cache-Control", "no-store"),
    ("X-Frame-Options", "DENY"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
)
"""Set on every response the page sends."""

SAFE_METHODS: Final = frozenset({"GET", "HEAD"})
METHODS: Final = frozenset({"GET", "HEAD", "POST"})
CSRF_FIELD: Final = "csrf"
"""The hidden form field every write carries."""
KEY_PARAMETER: Final = "key"

HOST_CODE: Final = "ENGRAM_UI_HOST"
METHOD_CODE: Final = "ENGRAM_UI_METHOD"
KEY_CODE: Final = "ENGRAM_UI_KEY"
ORIGIN_CODE: Final = "ENGRAM_UI_ORIGIN"
CSRF_CODE: Final = "ENGRAM_UI_CSRF"

_OPEN_THE_URL: Final = (
    "open the URL `engram ui` printed in your terminal (it carries this launch's key), or run "
    "`engram ui` again"
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request the page does not serve: its status, stable code, and the fix for a person."""

    status: int
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Redirect:
    """The key was right: set the cookie and go to `location` (the same path, without the key)."""

    location: str


@dataclass(frozen=True, slots=True)
class Admitted:
    """The request may be served."""


Verdict = Refusal | Redirect | Admitted


def _same(given: str | None, expected: str) -> bool:
    """Constant-time equality of a request's value with a secret (bytes: any text compares)."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("ascii"))


@dataclass(frozen=True, slots=True)
class Guard:
    """The doors of one launch on one port. The secrets are made here unless a test gives them."""

    port: int
    key: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    """In the URL `engram ui` prints, once: exchanged for the session cookie."""
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    """The session cookie's value."""
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    """The hidden field every form carries."""
    _spent: list[bool] = field(default_factory=lambda: [False], init=False, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def _spend_key(self) -> bool:
        """True the first time only: the URL works once (the browser's history keeps it, and an
        agent of the same user can read that history)."""
        with self._lock:
            first = not self._spent[0]
            self._spent[0] = True
            return first

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def cookie_name(self) -> str:
        """Named by port: cookies are shared by every port of a host, so two launches on two ports
        keep a cookie each."""
        return f"engram_ui_{self.port}"

    @property
    def url(self) -> str:
        """What `engram ui` prints and opens."""
        return f"http://127.0.0.1:{self.port}/?{KEY_PARAMETER}={self.key}"

    def check(self, request: Request) -> Verdict:
        """The first door `request` fails, or Redirect / Admitted (see the module docstring)."""
        host = request.environ.get("HTTP_HOST")
        if host not in self.hosts:
            return Refusal(
                421,
                HOST_CODE,
                f"this page answers only as 127.0.0.1:{self.port} or localhost:{self.port}; " + _OPEN_THE_URL,
            )
        if request.method not in METHODS:
            return Refusal(405, METHOD_CODE, "this page takes GET and POST (its forms) only")
        has_session = _same(request.cookies.get(self.cookie_name), self.session)
        if request.method in SAFE_METHODS and KEY_PARAMETER in request.args:
            if not _same(request.args.get(KEY_PARAMETER), self.key):
                return Refusal(403, KEY_CODE, "that key is not this launch's; " + _OPEN_THE_URL)
            if not has_session and not self._spend_key():
                return Refusal(
                    403,
                    KEY_CODE,
                    "this launch's URL was opened already, and works once: go on in the browser "
                    "that opened it, or run `engram ui` again for a new URL",
                )
            return Redirect(_without_key(request.path, request.args))
        if not has_session:
            return Refusal(403, KEY_CODE, "this browser has not opened this launch's URL; " + _OPEN_THE_URL)
        if request.method in SAFE_METHODS:
            return Admitted()
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"http://{host}":
            return Refusal(
                403, ORIGIN_CODE, "a write from another site or page is refused; use the page's own buttons"
            )
        site = request.headers.get("Sec-Fetch-Site")
        if site is not None and site != "same-origin":
            return Refusal(
                403, ORIGIN_CODE, "a write from another site or page is refused; use the page's own buttons"
            )
        if not _same(request.form.get(CSRF_FIELD), self.csrf):
            return Refusal(
                403,
                CSRF_CODE,
                "the form's token is missing or not this launch's (a page left open from an earlier "
                "launch?); reload the page and try again",
            )
        return Admitted()

    def cookie(self) -> dict[str, object]:
        """The session cookie's settings, for Response.set_cookie."""
        return {
            "key": self.cookie_name,
            "value": self.session,
            "httponly": True,
            "samesite": "Strict",
            "path": "/",
            "secure": False,  # plain HTTP on the loopback: a Secure cookie would not be sent back
        }


def _without_key(path: str, args: MultiDict[str, str]) -> str:
    """`path` and its other query parameters, without the key: always a path of this page
    (`//elsewhere` or `/\\elsewhere` would be another site to a browser), percent-encoded."""
    rest = [(name, value) for name, value in args.items(multi=True) if name != KEY_PARAMETER]
    local = quote("/" + path.lstrip("/\\"), safe="/-_.~")
    return local + ("?" + urlencode(rest) if rest else "")
