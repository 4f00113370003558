"""The WSGI application of `engram ui`: the doors (engram_mcp.ui.security), the routes, and the
one boundary where a page's failure becomes an error page.

Every request passes `Guard.check` before anything else runs, and every response, refusals and
errors included, carries security.HEADERS. Requests are served one at a time (one lock): the
page is one person's, and the store's write path expects one writer per process at a time.
Pages are jinja2 templates with autoescape on, and every value a template prints passes
store.safety.untrusted first (`_shown`): a memory from a clone can carry HTML, script, and the
control or bidi characters that would make the page say what it does not.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound, RequestEntityTooLarge
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from engram_mcp.ui import approval_code
from engram_mcp.ui.approval_code import FIELD as CODE_FIELD
from engram_mcp.ui.approval_code import ApprovalCode
from engram_mcp.ui.security import CSRF_FIELD, HEADERS, Admitted, Guard, Redirect, Refusal
from store.safety import untrusted
from store.store import Store

log = logging.getLogger("engram.ui")

HERE: Final = Path(__file__).resolve().parent
MAX_FORM_BYTES: Final = 64 * 1024
"""The largest request body a form may send (the page's forms send a few hundred bytes)."""
NOT_FOUND_CODE: Final = "ENGRAM_NOT_FOUND"
INTERNAL_CODE: Final = "ENGRAM_INTERNAL"
TOO_LARGE_CODE: Final = "ENGRAM_UI_TOO_LARGE"

Handler = Callable[..., Response]


def _shown(value: object) -> object:
    """What a template prints: Markup (rendered and sanitised already) as it is; any other value
    through untrusted.block (line breaks kept, every other control and invisible character
    escaped), None as nothing. Autoescape then escapes the HTML."""
    if isinstance(value, Markup):
        return value
    if value is None:
        return ""
    return untrusted.block(str(value))


def environment() -> Environment:
    """The templates, autoescaped, strict about undefined names, every value through `_shown`."""
    return Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        finalize=_shown,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@dataclass(slots=True)
class Page:
    """What a handler gets besides the request: the store, the launch's doors, the templates."""

    store: Store
    guard: Guard
    templates: Environment
    code: ApprovalCode
    """What every write of memory needs besides the cookie (engram_mcp.ui.approval_code)."""
    approvals: str | None = None
    """Why approving is refused in this launch (an agent's shell), or None when it is allowed."""
    extra: dict[str, Any] = field(default_factory=dict)

    def render(self, template: str, status: int = 200, **values: Any) -> Response:
        html = self.templates.get_template(template).render(
            csrf=self.guard.csrf,
            csrf_field=CSRF_FIELD,
            code_field=CODE_FIELD,
            workspace=self.store.workspace,
            **values,
        )
        return Response(html, status=status, mimetype="text/html")

    def problem(self, status: int, code: str, message: str) -> Response:
        return self.render("problem.html", status, code=code, message=message)

    def unapproved(self, request: Request, action: str) -> Response | None:
        """The refusal of a write of memory whose form lacks the terminal's approval code (the
        code is spent either way), or of any in a launch from an agent's shell; None when the
        form carries the code. `action` says in the terminal what the code is used for."""
        if self.approvals is not None:  # started from an agent's shell: no write of memory at all
            return self.problem(403, "ENGRAM_AGENT_SHELL", self.approvals)
        typed = request.form.get(CODE_FIELD)
        if self.code.spend(typed, action):
            return None
        return self.problem(403, approval_code.CODE, approval_code.refusal(typed, self.code.locked))


class UiApp:
    """`engram ui`'s WSGI application for one store and one launch's Guard."""

    def __init__(
        self,
        store: Store,
        guard: Guard,
        routes: Iterable[tuple[str, str, Handler]],
        *,
        code: ApprovalCode,
        approvals: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`routes`: (rule, method, handler); a handler takes (page, request, **the rule's values)."""
        self.page = Page(store, guard, environment(), code, approvals)
        self._clock = clock
        self.last_request = clock()
        """When the last request came (serve.py stops the page after an idle while)."""
        self._lock = threading.Lock()
        self._handlers: dict[str, Handler] = {}
        rules = []
        for n, (rule, method, handler) in enumerate(routes):
            endpoint = f"{n}:{rule}"
            self._handlers[endpoint] = handler
            rules.append(Rule(rule, endpoint=endpoint, methods=[method]))
        self._map = Map(rules, strict_slashes=False)
        self.after: Callable[[Page], None] = lambda page: None
        """Called after each page is made (engram_mcp.ui.serve starts the near-duplicate search)."""
        self._css = (HERE / "static" / "engram.css").read_bytes()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request = Request(environ)
        request.max_content_length = MAX_FORM_BYTES
        request.max_form_memory_size = MAX_FORM_BYTES
        response = self._respond(request)
        for name, value in HEADERS:
            response.headers[name] = value
        return response(environ, start_response)

    def _respond(self, request: Request) -> Response:
        page = self.page
        try:
            verdict = page.guard.check(request)
        except RequestEntityTooLarge:
            return page.problem(413, TOO_LARGE_CODE, "the form sent more than the page's forms ever send")
        if isinstance(verdict, Refusal):
            return page.render("refused.html", verdict.status, code=verdict.code, message=verdict.message)
        if isinstance(verdict, Redirect):
            self.last_request = self._clock()
            response = Response(status=303, headers={"Location": verdict.location})
            response.set_cookie(**page.guard.cookie())  # type: ignore[arg-type]
            return response
        assert isinstance(verdict, Admitted)
        self.last_request = self._clock()  # only a request through the doors keeps the page up
        if request.path == "/static/engram.css":
            return Response(self._css, mimetype="text/css")
        try:
            endpoint, values = self._map.bind_to_environ(request.environ).match()
        except NotFound:
            return page.problem(404, NOT_FOUND_CODE, "no such page: the list of memories is at /")
        except MethodNotAllowed:
            return page.problem(405, "ENGRAM_UI_METHOD", "this address takes its own form's method only")
        except HTTPException as exc:  # a redirect the map would make (never with strict_slashes off)
            return page.problem(exc.code or 400, NOT_FOUND_CODE, "no such page: the list of memories is at /")
        with self._lock:
            try:
                response = self._handlers[str(endpoint)](page, request, **values)
                self.after(page)
                return response
            except Exception:  # the one boundary: logged, and the page says so without a traceback
                log.exception("engram ui: %s %s failed", request.method, request.path)
                return page.problem(
                    500,
                    INTERNAL_CODE,
                    "the page failed (the terminal running `engram ui` has the details); reload "
                    "the list of memories to see what the store holds now",
                )
