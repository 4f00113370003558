"""Run `engram ui`: bind 127.0.0.1 (never another address), print the launch's URL, open the
browser unless told not to, serve until Ctrl-C, SIGTERM or an idle while without a request.

The server is werkzeug's threaded WSGI server in a thread of this process; the main thread
waits, so Ctrl-C and SIGTERM (raised there by the CLI's handler) stop it, and `finally` shuts
it down. It is never a daemon: it lives as long as the command, in the terminal that ran it.
Werkzeug's request log is off: its lines would print every path, the first one with the key.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import signal
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from engram_mcp.errors import Fixable
from engram_mcp.ui import pairs
from engram_mcp.ui.approval_code import ApprovalCode
from engram_mcp.ui.pages import ROUTES
from engram_mcp.ui.security import Guard
from engram_mcp.ui.webapp import UiApp
from store.store import Store

HOST: Final = "127.0.0.1"
"""The only address the page binds: the loopback, never 0.0.0.0 or ::."""
IDLE_MINUTES: Final = 30
POLL_SECONDS: Final = 1.0
PORT_CODE: Final = "ENGRAM_UI_PORT"


class _QuietHandler(WSGIRequestHandler):
    """No request log (the first path carries the key); errors still reach the logging module."""

    def log_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Launch:
    """A bound page: its server, application and URL (with the key)."""

    server: BaseWSGIServer
    app: UiApp
    url: str


def bind(store: Store, port: int = 0, *, approvals: str | None = None) -> Launch:
    """Bind 127.0.0.1:`port` (0: a free one the system picks) and make the launch's Guard.
    Fixable ENGRAM_UI_PORT when the port is taken or not allowed."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((HOST, port))
        listening.listen(128)
    except OSError as exc:
        listening.close()
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be used ({exc.strerror})"
        raise Fixable(
            PORT_CODE,
            f"port {port} on {HOST} {why}: pass another --port, or leave --port out for a free one",
        ) from None
    with listening:  # werkzeug serves a duplicate of it (its own bind would exit the process on failure)
        server = make_server(
            HOST,
            listening.getsockname()[1],
            _deferred(),
            threaded=True,
            request_handler=_QuietHandler,
            fd=listening.fileno(),
        )
    store.view()  # read the store in before the URL is printed: the first page does not wait for it
    guard = Guard(server.port)
    app = UiApp(store, guard, ROUTES, code=ApprovalCode(_announce), approvals=approvals)
    pairs.look_after_first_page(app.page)  # near-duplicates, once the first page is out
    app.after = pairs.started
    server.app = app
    return Launch(server, app, guard.url)


def undumpable() -> bool:
    """Make this process's memory unreadable to the user's other processes (Linux: prctl
    PR_SET_DUMPABLE 0, which also refuses them ptrace and /proc/PID/mem): the approval code is
    held there, and an agent runs as the same user. True when done; elsewhere, or when the call
    fails, False (SECURITY.md says what then remains)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


PR_SET_DUMPABLE: Final = 4
PR_SET_PDEATHSIG: Final = 1


def sealed() -> int | None:
    """Shut the door, then make the page in a child: None in the process that goes on to bind
    the page and make its secrets, the child's exit code in the parent, which only waits.

    Linux checks ptrace access when /proc/PID/mem is opened, not on each read: a descriptor a
    process of the user opened while this one still started up keeps reading its memory after
    `undumpable`. A child forked after it is undumpable from its birth and its memory is its
    own, so the URL's key, the cookie, the CSRF secret and the approval codes are made where no
    descriptor ever reached. Where the door cannot be shut (not Linux, the call refused) or a
    thread already runs (a fork keeps only the calling thread), the page runs in this process
    and doctor says what remains (SECURITY.md)."""
    if not undumpable() or threading.active_count() > 1 or not hasattr(os, "fork"):
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:
        with contextlib.suppress(OSError, AttributeError):  # the page ends with the command
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        return None
    return _wait_for(child)


def _wait_for(child: int) -> int:
    """The child's exit code (128 + the signal that ended it). Ctrl-C reaches the child from
    the terminal (one process group), so the parent ignores it; SIGTERM and SIGHUP sent to the
    parent are passed on."""

    def forward(signum: int, frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGHUP, forward)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _announce(line: str) -> None:
    """What became of each approval code, and the next one, in the terminal running the page
    (never in a page)."""
    print(f"engram ui: {line}", flush=True)


def _deferred() -> Callable[..., Any]:
    """A placeholder application: make_server needs one before the port (and so the Guard) is known."""

    def unset(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
        return [b"starting"]

    return unset


def run(
    launch: Launch,
    *,
    idle_seconds: float = IDLE_MINUTES * 60,
    wait: Callable[[float], bool] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> str:
    """Serve until `idle_seconds` pass without a request; why it stopped. Ctrl-C and SIGTERM
    propagate (the CLI's exit codes) after the server is shut down. `wait(seconds)` returns True
    to stop at once (tests inject it; by default it sleeps)."""
    pause = wait or _sleep
    thread = threading.Thread(
        target=launch.server.serve_forever, kwargs={"poll_interval": 0.2}, name="engram-ui", daemon=True
    )
    thread.start()
    try:
        while True:
            idle = clock() - launch.app.last_request
            if idle >= idle_seconds:
                minutes = round(idle_seconds / 60)
                return f"engram ui: stopped after {minutes} minute{'s' if minutes != 1 else ''} without a request."
            if pause(min(POLL_SECONDS, idle_seconds - idle)):
                return "engram ui: stopped."
    finally:
        launch.server.shutdown()
        launch.server.server_close()
        thread.join(timeout=5)


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return False


def open_browser(url: str) -> bool:
    """Open `url` in the person's browser; False when no browser could be started."""
    try:
        return webbrowser.open(url)
    except webbrowser.Error:
        return False
