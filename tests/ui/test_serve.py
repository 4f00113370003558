"""`engram ui`'s server (engram_mcp.ui.serve): 127.0.0.1 only, a free port by default, its URL
with the launch's key, the idle stop, and a taken port refused with the fix."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import threading

import pytest

from engram_mcp.errors import Fixable
from engram_mcp.ui import serve
from store.store import Store


def _request(port: int, path: str, host: str | None = None, cookie: str = "") -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Host": host or f"127.0.0.1:{port}"}
    if cookie:
        headers["Cookie"] = cookie
    connection.request("GET", path, headers=headers)
    return connection.getresponse()


def test_the_page_binds_the_loopback_on_a_free_port_and_serves_until_stopped(store: Store) -> None:
    launch = serve.bind(store)
    port = launch.server.port
    assert launch.server.server_address[0] == "127.0.0.1" and port > 0
    assert launch.url.startswith(f"http://127.0.0.1:{port}/?key=")
    stop = threading.Event()
    said: list[str] = []
    runner = threading.Thread(target=lambda: said.append(serve.run(launch, wait=stop.wait)))
    runner.start()
    try:
        refused = _request(port, "/")
        assert refused.status == 403 and b"ENGRAM_UI_KEY" in refused.read()
        assert _request(port, "/", host="evil.example").status == 421
        opened = _request(port, launch.url.split(str(port), 1)[1])
        assert opened.status == 303
        cookie = opened.getheader("Set-Cookie", "").split(";", 1)[0]
        page = _request(port, "/", cookie=cookie)
        assert page.status == 200 and b"Use uv for installs" in page.read()
        assert page.getheader("Content-Security-Policy", "").startswith("default-src 'none'")
    finally:
        stop.set()
        runner.join(timeout=10)
    assert said == ["engram ui: stopped."]
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_the_page_stops_after_its_idle_while(store: Store) -> None:
    """No request for the idle while: `run` returns and the port is closed (the clock injected)."""
    launch = serve.bind(store)
    launch.app.last_request = 0.0
    said = serve.run(launch, idle_seconds=30 * 60, clock=lambda: 30 * 60 + 1.0)
    assert said == "engram ui: stopped after 30 minutes without a request."


def test_a_request_restarts_the_idle_while(store: Store) -> None:
    launch = serve.bind(store)
    launch.app._clock = lambda: 100.0  # a request at 100 s
    launch.app.last_request = 0.0
    clock = iter([59.0, 130.0, 161.0])
    waits: list[float] = []

    def wait(seconds: float) -> bool:
        waits.append(seconds)
        if len(waits) == 1:  # the browser opens the URL while the page waits
            _request(launch.server.port, f"/?key={launch.app.page.guard.key}").read()
        return False

    said = serve.run(launch, idle_seconds=60, wait=wait, clock=lambda: next(clock))
    assert said == "engram ui: stopped after 1 minute without a request."
    assert len(waits) == 2


def test_a_refused_request_does_not_keep_the_page_up(store: Store) -> None:
    """Attack round, issue 23: wrong-Host or cookie-less requests kept resetting the idle time."""
    launch = serve.bind(store)
    launch.app._clock = lambda: 100.0
    launch.app.last_request = 0.0
    clock = iter([59.0, 61.0])
    waits: list[float] = []

    def wait(seconds: float) -> bool:
        waits.append(seconds)
        _request(launch.server.port, "/").read()  # no cookie: 403
        _request(launch.server.port, "/", host="evil.example").read()  # 421
        return False

    said = serve.run(launch, idle_seconds=60, wait=wait, clock=lambda: next(clock))
    assert said == "engram ui: stopped after 1 minute without a request."
    assert len(waits) == 1


def test_a_taken_port_is_refused_with_the_fix(store: Store) -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    try:
        with pytest.raises(Fixable) as refused:
            serve.bind(store, holder.getsockname()[1])
    finally:
        holder.close()
    assert refused.value.code == serve.PORT_CODE
    assert "is in use" in refused.value.message and "--port" in refused.value.message


def test_ctrl_c_shuts_the_server_down_and_propagates(store: Store) -> None:
    """Ctrl-C (and SIGTERM, raised as Terminated by the CLI) stops the page: the port is closed
    before the exception reaches the CLI, which exits 130 (143)."""
    launch = serve.bind(store)
    port = launch.server.port

    def interrupted(seconds: float) -> bool:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        serve.run(launch, wait=interrupted)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_the_page_process_is_not_dumpable_on_linux() -> None:
    """Second attack round: another process of the user read the approval code from
    /proc/PID/mem of `engram ui`. Checked in a process of its own (this one stays dumpable)."""
    probe = (
        "import ctypes, sys\n"
        "from engram_mcp.ui import serve\n"
        "done = serve.undumpable()\n"
        "print(done, ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) if sys.platform.startswith('linux') else '-')\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    expected = "True 0" if sys.platform.startswith("linux") else "False -"  # PR_GET_DUMPABLE: 0
    assert ran.stdout.strip() == expected
