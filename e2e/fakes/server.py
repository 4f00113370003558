"""A threaded HTTP server on 127.0.0.1 that hands each request to one API module's `respond`."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from e2e.fakes.script import Script


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    content_type: str
    chunks: Iterable[bytes]


Responder = Callable[[Script, Request], Reply]


def json_reply(payload: Any, status: int = 200) -> Reply:
    return Reply(status, "application/json", [json.dumps(payload).encode()])


def sse_reply(events: Iterable[tuple[str | None, Any]]) -> Reply:
    """Server-sent events; a `None` event name writes a bare `data:` line."""
    chunks = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {name}\n" if name else ""
        chunks.append(f"{head}data: {text}\n\n".encode())
    return Reply(200, "text/event-stream", chunks)


class FakeModel:
    """Serves one API on an ephemeral loopback port until `close`."""

    def __init__(self, script: Script, respond: Responder) -> None:
        self.script = script
        handler = _handler(script, respond)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(script: Script, respond: Responder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base signature
            return  # every request is in the script's log instead

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            parts = urlsplit(self.path)
            request = Request(self.command, parts.path, parse_qs(parts.query), dict(self.headers), body)
            try:
                reply = respond(script, request)
            except Exception as exc:  # the host must see an HTTP error, never a hang
                script.log({"error": repr(exc), "path": self.path})
                reply = json_reply({"error": {"message": repr(exc)}}, 500)
            script.log({"method": self.command, "path": self.path, "status": reply.status, "body": body})
            self.send_response(reply.status)
            self.send_header("content-type", reply.content_type)
            if reply.content_type == "text/event-stream":
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in reply.chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True
                return
            data = b"".join(reply.chunks)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _serve

    return Handler
