"""A raw JSON-lines client for the real `engram-mcp` process, for wire-level tests."""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

SERVER = str(Path(sys.executable).with_name("engram-mcp"))
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


class WireSession:
    """Spawn `engram-mcp` in `workspace`; send lines, read replies with timeouts."""

    def __init__(self, workspace: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [SERVER, *args],
            cwd=workspace,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._ids = itertools.count(1)
        self.raw_stdout: list[bytes] = []
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_stdout.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def recv(self, timeout: float = 10.0) -> Any:
        line = self._lines.get(timeout=timeout)
        if line is None:
            raise EOFError("engram-mcp closed stdout")
        return json.loads(line)

    def no_message(self, wait: float = 0.5) -> bool:
        try:
            self._lines.get(timeout=wait)
        except queue.Empty:
            return True
        return False

    def request(self, method: str, params: Any = None, *, timeout: float = 10.0) -> dict[str, Any]:
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

    def close(self, timeout: float = 10.0) -> int:
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

    def __enter__(self) -> WireSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            try:
                self.close()
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self._release()
