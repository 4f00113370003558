"""Backpressure on the real process (issue 9, SPEC §6; design in `protocol.bounds`).

A client that floods requests without reading replies used to drive the server to 2.5 GB:
the reader queued every line it could read. Now the reader stops while `MAX_PENDING`
operations are pending and the pool's replies block on the full stdout pipe, so the
server's memory stays flat however much the client writes; once the client reads, every
request is answered. Only a real process shows this (pipe buffers, RSS), so it is spawned.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from tests.wire import SERVER

REQUESTS = 5_000
PAD_BYTES = 16_000
"""Each request carries this much padding: 80 MB in all, which today's reader swallowed whole."""
FLOOD_SECONDS = 3.0
RSS_GROWTH_LIMIT_MB = 30
"""Allowed growth over a warmed-up server (measured: +2 MB bounded, +97 MB with the unbounded reader)."""


def _rss_mb(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS in /proc status")


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _reply(stdout: IO[bytes]) -> dict[str, Any]:
    line = stdout.readline()
    assert line, "engram-mcp closed stdout"
    reply: dict[str, Any] = json.loads(line)
    return reply


def test_flooding_client_that_does_not_read_keeps_server_memory_bounded(workspace: Path) -> None:
    """Issue 9: 5,000 padded tools/call unread for 3 s; RSS stays flat, then all are answered."""
    proc = subprocess.Popen(
        [SERVER], cwd=workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init}))
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        warm = {"name": "engram_search", "arguments": {"query": "python uv"}}
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": "warm", "method": "tools/call", "params": warm}))
        proc.stdin.flush()
        assert _reply(proc.stdout)["id"] == "init"
        assert _reply(proc.stdout)["id"] == "warm"
        baseline = _rss_mb(proc.pid)

        pad = "x" * PAD_BYTES
        flood = b"".join(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "engram_search", "arguments": {"query": "python uv", "pad": pad}},
                }
            )
            for n in range(REQUESTS)
        )
        stdin = proc.stdin

        def write_all() -> None:
            try:
                stdin.write(flood)
                stdin.flush()
            except (BrokenPipeError, ValueError):
                pass  # the server was killed after a failed assertion

        writer = threading.Thread(target=write_all, daemon=True)
        writer.start()
        peak = baseline
        deadline = time.monotonic() + FLOOD_SECONDS
        while time.monotonic() < deadline:
            peak = max(peak, _rss_mb(proc.pid))
            time.sleep(0.1)
        assert writer.is_alive(), "the server read the whole flood without anyone reading its replies"
        assert peak - baseline <= RSS_GROWTH_LIMIT_MB, (
            f"RSS grew {peak - baseline} MB while replies went unread"
        )

        answered: set[Any] = set()
        while len(answered) < REQUESTS:
            reply = _reply(proc.stdout)
            assert reply["id"] not in answered, reply["id"]
            assert reply["result"]["isError"] is True, reply  # the pad is an unknown argument
            answered.add(reply["id"])
            if len(answered) % 2_000 == 0:
                peak = max(peak, _rss_mb(proc.pid))
        writer.join(timeout=10)
        assert answered == set(range(REQUESTS))
        assert peak - baseline <= RSS_GROWTH_LIMIT_MB, f"RSS grew {peak - baseline} MB"
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
