"""A small MCP stdio client for the side-by-side eval (eval/peers.py): newline-delimited
JSON-RPC, the legacy `initialize` handshake, `tools/call`. Written here rather than taken from
the `mcp` SDK so the eval drives each server over the same bytes, with one read timeout.

A server's stdout carries only MCP messages; its stderr goes to a log file (never parsed). A
request the server sends us (`ping`, `roots/list`) is answered with an empty result so no
server waits on us; notifications are skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

PROTOCOL_VERSION = "2025-06-18"
CLIENT_INFO = {"name": "engram-eval-peers", "version": "1"}


class PeerError(RuntimeError):
    """A peer server that would not start, answer or call a tool (the reason is the message)."""


class McpClient:
    """One server process over stdio. `call(tool, arguments)` returns the tool result dict."""

    def __init__(
        self,
        command: Sequence[str],
        env: dict[str, str],
        cwd: Path,
        log: Path,
        timeout: float = 120.0,
    ) -> None:
        self.timeout = timeout
        self._log: TextIO = log.open("w", encoding="utf-8")
        try:
            self.proc = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                env=env,
                cwd=cwd,
            )
        except OSError as exc:
            self._log.close()
            raise PeerError(f"cannot start {command[0]}: {exc}") from exc
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next = 0
        self.server_info: dict[str, Any] = {}

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")  # end of stream

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise PeerError(f"server closed its input ({exc})") from exc

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The `result` of one request; PeerError on an error reply, exit or timeout."""
        self._next += 1
        wanted = self._next
        self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        while True:
            try:
                line = self._lines.get(timeout=self.timeout)
            except queue.Empty:
                raise PeerError(f"no answer to {method} within {self.timeout:g} s") from None
            if not line:
                try:
                    code: int | None = self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    code = None  # stdout closed, the process still running
                raise PeerError(f"server exited (code {code}) before answering {method}")
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                raise PeerError(f"not JSON on stdout: {line[:120]!r}") from None
            if "method" in message:
                if "id" in message:  # a request from the server: answer it, empty
                    self._send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
                continue
            if message.get("id") != wanted:
                continue
            if "error" in message:
                raise PeerError(f"{method}: {message['error'].get('message', message['error'])}")
            result: dict[str, Any] = message.get("result", {})
            return result

    def initialize(self) -> dict[str, Any]:
        params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
        result = self.request("initialize", params)
        self.server_info = dict(result.get("serverInfo", {}))
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tool's result; PeerError when the server marks it `isError`."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise PeerError(f"{tool} failed: {result_text(result)[:300]}")
        return result

    def close(self) -> None:
        """Close stdin, wait, then terminate and kill (the stdio shutdown order)."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        for stop in (None, self.proc.terminate, self.proc.kill):
            if stop is not None:
                stop()
            try:
                self.proc.wait(timeout=10)
                break
            except subprocess.TimeoutExpired:
                continue
        self._reader.join(timeout=10)  # it ends at the stream's end, once the process is gone
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()

    def __enter__(self) -> McpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def result_text(result: dict[str, Any]) -> str:
    """The text blocks of a tool result, joined: what a model reads."""
    blocks = result.get("content", [])
    return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


def clean_env(**extra: str) -> dict[str, str]:
    """A child's environment: PATH and locale from ours, nothing else of the user's, plus `extra`
    (each server gets its own temp HOME from the caller)."""
    keep = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(extra)
    return env
