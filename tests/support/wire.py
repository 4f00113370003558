"""Raw JSON-lines clients for wire-level tests, and the assertions they share.

`WireSession` runs the server in this process, over two OS pipes: the real line framing, reader
thread, worker pool, elicitation round trips and store, wired from the same flags and
environment as `engram-mcp`, without a process's start-up (about 0.65 s a spawn). Almost every
wire test uses it. `ProcessSession` spawns the real `engram-mcp`, with the same methods, for
what only a process shows: stdout purity, exit on EOF, signals (tests/process/test_process.py).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import logging
import os
import queue
import re
import signal
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from engram_mcp.mcp.server import application
from protocol.eras import META_CAPABILITIES, META_VERSION, MODERN_VERSIONS
from protocol.loop import Server
from tests.support.paths import ENGRAM_MCP

MODERN = MODERN_VERSIONS[0]
MODERN_META = {META_VERSION: MODERN, META_CAPABILITIES: {}}
REPLY_TIMEOUT = 30.0
"""How long `recv` waits by default: generous, since only a broken server ever reaches it."""


# --- assertions on replies -----------------------------------------------------------------


def error_of(reply: dict[str, Any], code: int) -> dict[str, Any]:
    """Assert `reply` is a JSON-RPC error with `code`; return its error object."""
    assert isinstance(reply, dict), reply
    assert "result" not in reply, reply
    assert reply["jsonrpc"] == "2.0"
    assert reply["error"]["code"] == code, reply
    assert isinstance(reply["error"]["message"], str) and reply["error"]["message"]
    error: dict[str, Any] = reply["error"]
    return error


def result_of(reply: dict[str, Any]) -> Any:
    """Assert `reply` is a JSON-RPC result; return it."""
    assert "error" not in reply, reply
    assert reply["jsonrpc"] == "2.0"
    return reply["result"]


def tool_data(reply: dict[str, Any]) -> dict[str, Any]:
    """Assert `reply` is a tools/call result that succeeded (isError false, ok true); its `data`."""
    result = result_of(reply)
    assert result["isError"] is False, result
    assert result["structuredContent"]["ok"] is True, result["structuredContent"]
    data: dict[str, Any] = result["structuredContent"]["data"]
    return data


def assert_validation_refusal(
    reply: dict[str, Any], argument: str, bounds: tuple[int, int] | None = None
) -> None:
    """A normal tools/call result that refuses the arguments: isError true, ok false, and
    ENGRAM_VALIDATION naming `argument` (and its range) in the diagnostic and in the text."""
    result = result_of(reply)
    assert result["isError"] is True
    assert result["structuredContent"]["ok"] is False
    diagnostics = result["structuredContent"]["diagnostics"]
    assert "ENGRAM_VALIDATION" in [d["code"] for d in diagnostics]
    message = next(d["message"] for d in diagnostics if d["code"] == "ENGRAM_VALIDATION")
    for text in (message, result["content"][0]["text"]):
        assert re.search(rf"\b{re.escape(argument)}\b", text), text
        if bounds is not None:
            assert re.search(rf"\b{bounds[0]}\b\D*\b{bounds[1]}\b", text), text
    assert "Traceback" not in result["content"][0]["text"]


# --- sessions --------------------------------------------------------------------------------


class _Client:
    """What both sessions share: numbered requests, the handshake, reading lines with timeouts."""

    _lines: queue.Queue[bytes | None]
    raw_stdout: list[bytes]
    stderr: str

    def __init__(self) -> None:
        self._lines = queue.Queue()
        self._ids = itertools.count(1)
        self.raw_stdout = []
        self.stderr = ""

    def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def _pump(self, stream: IO[bytes]) -> None:
        for line in stream:
            self.raw_stdout.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def send_raw(self, data: bytes) -> None:
        self._write(data)

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def line(self, timeout: float | None = None) -> bytes | None:
        """The next raw line the server wrote; None once it has closed stdout."""
        line = self._lines.get(timeout=timeout)
        if line is None:
            self._lines.put(None)
        return line

    def recv(self, timeout: float = REPLY_TIMEOUT) -> Any:
        line = self._lines.get(timeout=timeout)
        if line is None:
            raise EOFError("engram-mcp closed stdout")
        return json.loads(line)

    def quiet(self) -> bool:
        """Nothing came before the answer to a ping sent now. The reader handles notifications,
        responses, blank and bad lines inline and in order, so whatever it sent for the lines
        before would already be here: exact, without waiting for silence."""
        id_ = f"quiet-{next(self._ids)}"
        self.send({"jsonrpc": "2.0", "id": id_, "method": "ping"})
        return bool(self.recv() == {"jsonrpc": "2.0", "id": id_, "result": {}})

    def rest(self) -> list[Any]:
        """Close stdin and return every message the server still sent before closing stdout
        (it finishes in-flight work first, so a stray late reply is caught, without a wait).
        The exit code is `returncode`."""
        self.close()
        messages = []
        while (line := self._lines.get(timeout=REPLY_TIMEOUT)) is not None:
            messages.append(json.loads(line))
        self._lines.put(None)
        return messages

    def close(self, timeout: float = REPLY_TIMEOUT) -> int:
        raise NotImplementedError

    def request(self, method: str, params: Any = None, *, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """Send a request and return the reply with its id (other messages are skipped)."""
        id_ = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.recv(timeout)
            if reply.get("id") == id_ and "method" not in reply:
                return reply

    def initialize(
        self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def modern(self, method: str, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
        envelope = {**MODERN_META, **meta}
        return self.request(method, {**(params or {}), "_meta": envelope})

    def call(self, name: str, arguments: Any = None, *, modern: bool = False) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return self.modern("tools/call", params) if modern else self.request("tools/call", params)


class WireSession(_Client):
    """engram's server in this process, as `engram-mcp *args` would start in `workspace` with
    `env` added to the environment; send lines, read replies with timeouts.

    `close()` ends stdin, waits for the server to finish its in-flight work and returns 0 (1 if
    `serve` raised); `stderr` then holds what the `engram` loggers wrote meanwhile, formatted
    as the process formats it. Variables in `env` are set in `os.environ` while the session
    lives (the lock reads ENGRAM_LOCK_TIMEOUT from there) and restored on close.
    """

    def __init__(self, workspace: Path, *args: str, env: dict[str, str] | None = None) -> None:
        super().__init__()
        self._env = _Environment(env or {})
        self._log = _Log(os.environ.get("ENGRAM_LOG", "WARNING"))
        try:
            self.app = application(args, workspace)
            self.server = Server(self.app.spec())
        except BaseException:
            self._log.close()
            self._env.restore()
            raise
        client_in, server_in = os.pipe()
        server_out, client_out = os.pipe()
        self._stdin = os.fdopen(server_in, "wb")
        self._server_streams = (os.fdopen(client_in, "rb"), os.fdopen(client_out, "wb", buffering=0))
        self._stdout = os.fdopen(server_out, "rb")
        self.returncode: int | None = None
        self._serving = threading.Thread(target=self._serve, name="engram-test-serve", daemon=True)
        self._pumping = threading.Thread(target=self._pump, args=(self._stdout,), daemon=True)
        self._serving.start()
        self._pumping.start()

    def _serve(self) -> None:
        wire_in, wire_out = self._server_streams
        code = 1
        try:
            self.server.serve(wire_in, wire_out)
            code = 0
        except BaseException:
            logging.getLogger("engram").exception("serve raised")
        finally:
            self.app.close()
            wire_out.close()
            wire_in.close()
            self.returncode = code

    def _write(self, data: bytes) -> None:
        self._stdin.write(data)
        self._stdin.flush()

    def alive(self) -> bool:
        return self._serving.is_alive()

    def close(self, timeout: float = REPLY_TIMEOUT) -> int:
        if not self._stdin.closed:
            self._stdin.close()
        self._serving.join(timeout)
        if self._serving.is_alive():
            raise TimeoutError(f"the server did not finish within {timeout} s of EOF")
        for helper in self.app.helpers:  # the warm-up threads: nothing outlives a session
            helper.join(timeout)
        self._pumping.join(timeout)
        self._stdout.close()
        self.stderr = self._log.close()
        self._env.restore()
        assert self.returncode is not None
        return self.returncode

    def __enter__(self) -> WireSession:
        return self

    def __exit__(self, failed: object, *exc: object) -> None:
        if self.returncode is not None:
            return
        if failed is None:
            self.close()
        else:  # the test has already failed: do not hide why behind a server that hangs too
            with contextlib.suppress(TimeoutError):
                self.close(timeout=5.0)


class _Environment:
    """`os.environ` with some variables set, until `restore`."""

    def __init__(self, env: dict[str, str]) -> None:
        self._saved = {name: os.environ.get(name) for name in env}
        os.environ.update(env)

    def restore(self) -> None:
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved = {}


class _Log:
    """What the `engram` loggers write while a session lives, formatted as `engram-mcp` does."""

    def __init__(self, level: str) -> None:
        self._logger = logging.getLogger("engram")
        self._level = self._logger.level
        self._text = io.StringIO()
        self._handler = logging.StreamHandler(self._text)
        self._handler.setFormatter(logging.Formatter("engram-mcp %(levelname)s %(message)s"))
        self._logger.addHandler(self._handler)
        self._logger.setLevel(getattr(logging, level.upper(), logging.WARNING))

    def close(self) -> str:
        self._logger.removeHandler(self._handler)
        self._logger.setLevel(self._level)
        return self._text.getvalue()


def default_sigint() -> None:
    """A child's `preexec_fn`: SIGINT's default action, as a terminal's Ctrl-C finds it (a run
    started in the background, `make test &`, ignores SIGINT, and a child inherits that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class ProcessSession(_Client):
    """Spawn `engram-mcp` in `workspace`; send lines, read replies with timeouts.

    `sigint=True` gives the process the default SIGINT action, as a terminal's Ctrl-C finds it:
    a test run started in the background (`make test &`) ignores SIGINT, and a child inherits that.
    """

    def __init__(
        self, workspace: Path, *args: str, env: dict[str, str] | None = None, sigint: bool = False
    ) -> None:
        super().__init__()
        self.proc = subprocess.Popen(
            [ENGRAM_MCP, *args],
            cwd=workspace,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            preexec_fn=default_sigint if sigint else None,
        )
        assert self.proc.stdout is not None
        self._pump_thread = threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True)
        self._pump_thread.start()

    def _write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def alive(self) -> bool:
        return self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def close(self, timeout: float = REPLY_TIMEOUT) -> int:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        self._release()
        return code

    def _release(self) -> None:
        self._pump_thread.join(timeout=5)
        assert self.proc.stderr is not None and self.proc.stdout is not None
        self.stderr = self.proc.stderr.read().decode(errors="replace")
        self.proc.stderr.close()
        self.proc.stdout.close()

    def __enter__(self) -> ProcessSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            try:
                self.close()
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self._release()
