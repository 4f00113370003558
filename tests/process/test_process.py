"""The real `engram-mcp` process: what only a process shows (SPEC §6, §11; issue 9).

Every other wire test runs the server in the test's own process (tests/support/wire.py, tests/support/sdk.py).
These spawn it, as a host does: stdout carries nothing but JSON lines, EOF ends it with 0,
SIGINT and SIGTERM end it at once, a flood of unread requests keeps its memory flat, and the
official SDK client talks to it over stdio in each mode.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest
from mcp import MCPError
from mcp.types import TextResourceContents

from protocol.errors import INVALID_PARAMS
from tests.support.paths import ENGRAM_MCP
from tests.support.sdk import MODES, assert_era, data, process_client, run
from tests.support.wire import ProcessSession

# --- stdout, EOF, signals ----------------------------------------------------------------------


def test_stdout_carries_only_json_lines_for_the_whole_session(workspace: Path) -> None:
    """Every byte on stdout is a newline-terminated JSON-RPC message, whatever the session did
    (stray output from the flags, logging or a C extension goes to stderr)."""
    with ProcessSession(workspace, "--no-such-flag") as s:
        s.send_raw(b"{oops\n")
        s.recv()
        s.request("ping")
        s.modern("server/discover")
        s.initialize("2025-03-26")
        s.request("tools/list")
        s.call("engram_search", {"query": "uv"})
        s.call("engram_search", {"query": 5})
        s.call("engram_load", {"query": "write a migration", "explain": True})
        s.call("engram_verify", {})
        s.request("engram_status")
        s.request("resources/read", {"uri": "engram://index"})
        s.request("resources/read", {"uri": "engram://memory/does-not-exist"})
        s.request("prompts/get", {"name": "propose", "arguments": {"topic": "x"}})
        s.send([{"jsonrpc": "2.0", "id": "b1", "method": "ping"}])
        s.recv()
        assert s.close() == 0
        assert s.raw_stdout
        for line in s.raw_stdout:
            assert line.endswith(b"\n") and line.count(b"\n") == 1, line[:200]
            message = json.loads(line.decode("utf-8"))
            items = message if isinstance(message, list) else [message]
            for item in items:
                assert item["jsonrpc"] == "2.0"
                assert ("result" in item) != ("error" in item) or "method" in item
    assert s.stderr.count("--no-such-flag") == 1


def test_exit_code_is_zero_on_stdin_eof(workspace: Path) -> None:
    """Closing stdin ends the server with exit code 0, before and after traffic."""
    with ProcessSession(workspace) as s:
        assert s.close() == 0
    with ProcessSession(workspace) as s:
        s.initialize()
        s.call("engram_search", {"query": "uv"})
        assert s.close() == 0
    assert "Traceback" not in s.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_the_server_at_once_with_whole_lines_on_stdout(workspace: Path, signum: int) -> None:
    """SIGINT (Ctrl-C in a terminal) and SIGTERM (a host stopping its servers) end the process
    within seconds with exit 130 / 143, even with calls in flight, and stdout holds only whole
    JSON lines."""
    with ProcessSession(workspace, sigint=True) as s:
        s.initialize()
        assert s.call("engram_status", {})["result"]["isError"] is False
        for n in range(4):  # calls in flight when the signal lands
            s.send(
                {
                    "jsonrpc": "2.0",
                    "id": f"load-{n}",
                    "method": "tools/call",
                    "params": {"name": "engram_load", "arguments": {"full": True, "explain": True}},
                }
            )
        s.proc.send_signal(signum)
        assert s.proc.wait(timeout=15) == 128 + signum  # 130 / 143, the shell's convention (issue 12)
        s.close()
    for line in s.raw_stdout:
        assert line.endswith(b"\n"), line[:200]
        assert json.loads(line)["jsonrpc"] == "2.0"


# --- memory under a flood (issue 9) ------------------------------------------------------------

REQUESTS = 5_000
PAD_BYTES = 16_000
"""Each request carries this much padding: 80 MB in all, which the old reader swallowed whole."""
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
    """Issue 9: 5,000 padded tools/call unread for 3 s; RSS stays flat, then all are answered.

    The reader stops while `MAX_PENDING` operations are pending and the pool's replies block on
    the full stdout pipe; only a real process shows that (pipe buffers, RSS), so it is spawned."""
    proc = subprocess.Popen(
        [ENGRAM_MCP], cwd=workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
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


# --- the official SDK client over stdio, each mode ---------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_talks_to_the_real_process(workspace: Path, mode: str) -> None:
    """`mcp.Client` spawns `engram-mcp` as a host does and speaks the era of its mode: lists the
    tools (learning their output schemas), calls one, reads a resource, meets both error planes.
    Everything else the SDK sees is tested in-process (tests/mcp/test_sdk_clients.py, test_write_sdk.py)."""

    async def body() -> None:
        async with process_client(workspace, mode) as session:
            assert_era(session, mode)
            tools = (await session.list_tools()).tools
            assert "engram_search" in [t.name for t in tools]
            found = data(await session.call_tool("engram_search", {"query": "uv python", "limit": 5}))
            assert "use-uv-for-python" in [e["id"] for e in found["entries"]]
            index = (await session.read_resource("engram://index")).contents
            assert isinstance(index[0], TextResourceContents) and "use-uv-for-python" in index[0].text
            bad = await session.call_tool("engram_search", {"query": "uv", "limit": 0})
            assert bad.is_error is True
            with pytest.raises(MCPError) as raised:
                await session.call_tool("engram_no_such_tool", {})
            assert raised.value.error.code == INVALID_PARAMS
            assert (await session.call_tool("engram_status", {})).is_error is False

    run(body)
