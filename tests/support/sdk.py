"""The official MCP Python SDK client (mcp 2.x) against engram, and what its tests share.

`client(workspace, mode)` connects `mcp.Client` to the server in this process (tests/support/wire.py's
`WireSession`: the real line framing, reader thread and worker pool over OS pipes) through a
small transport, so the SDK sees exactly the bytes `engram-mcp` would write. `process_client`
spawns the real `engram-mcp` as a host does; only tests/process/test_process.py uses it.

`mcp.Client` validates each tool's `structuredContent` against the `outputSchema` it listed, so
a tool call that comes back without raising proves the published schema is true.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp import Client, StdioServerParameters
from mcp.client.session import ElicitationFnT
from mcp.shared.message import SessionMessage
from mcp.types import CallToolResult, TextContent, jsonrpc_message_adapter

from tests.support.paths import ENGRAM_MCP
from tests.support.wire import MODERN, WireSession

MODES = ("legacy", "auto", MODERN)
"""How the SDK connects: the initialize handshake, discover with fallback, or pinned to 2026-07-28."""
TIMEOUT = 15.0
"""Per-request read timeout (seconds) given to the SDK."""
DEADLINE = 45.0
"""A whole test body, connect to close."""


@asynccontextmanager
async def _in_process(
    workspace: Path, *args: str, env: dict[str, str] | None
) -> AsyncIterator[tuple[Any, Any]]:
    """An SDK transport to a `WireSession`: SDK messages become wire lines and back."""
    wire = await anyio.to_thread.run_sync(lambda: WireSession(workspace, *args, env=env))
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        async with to_client:
            while (line := await anyio.to_thread.run_sync(wire.line, abandon_on_cancel=True)) is not None:
                try:
                    message: SessionMessage | Exception = SessionMessage(
                        jsonrpc_message_adapter.validate_json(line, by_name=False)
                    )
                except ValueError as exc:
                    message = exc
                await to_client.send(message)

    async def write() -> None:
        async with from_client:
            async for message in from_client:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                await anyio.to_thread.run_sync(wire.send_raw, data)

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            try:
                yield from_server, to_server
            finally:
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(wire.close)
        assert wire.returncode == 0, wire.stderr


def client(
    workspace: Path,
    mode: str,
    env: dict[str, str] | None = None,
    *,
    elicitation: ElicitationFnT | None = None,
) -> Client:
    """`mcp.Client` on the server in this process, as `engram-mcp` would start in `workspace`."""
    return Client(
        _in_process(workspace, env=env),
        mode=mode,
        read_timeout_seconds=TIMEOUT,
        elicitation_callback=elicitation,
    )


def process_client(workspace: Path, mode: str, env: dict[str, str] | None = None) -> Client:
    """`mcp.Client` spawning the real `engram-mcp` over stdio, as a host does."""
    params = StdioServerParameters(
        command=ENGRAM_MCP, args=[], cwd=str(workspace), env={**os.environ, **(env or {})}
    )
    return Client(params, mode=mode, read_timeout_seconds=TIMEOUT)


def run(body: Callable[[], Awaitable[None]], deadline: float = DEADLINE) -> None:
    """Run an async test body under a deadline."""

    async def bounded() -> None:
        with anyio.fail_after(deadline):
            await body()

    anyio.run(bounded)


def assert_era(client: Client, mode: str) -> None:
    """The session speaks the era `mode` asked for."""
    if mode == "legacy":
        assert client.protocol_version == "2025-11-25"
        assert client.session.discover_result is None
    else:
        assert client.protocol_version == MODERN
        assert client.session.discover_result is not None


def text(result: CallToolResult) -> str:
    """The tool's human text (its first content block)."""
    assert result.content and isinstance(result.content[0], TextContent)
    return result.content[0].text


def data(result: CallToolResult) -> dict[str, Any]:
    """A normal answer: text first, ok envelope (contract 1, diagnostics a list); returns `data`."""
    assert result.is_error is False, text(result)
    assert text(result).strip()
    structured = result.structured_content
    assert isinstance(structured, dict)
    assert structured["contract_version"] == 1 and structured["ok"] is True
    assert isinstance(structured["diagnostics"], list)
    out = structured["data"]
    assert isinstance(out, dict)
    return out


def refusal(result: CallToolResult) -> tuple[list[str], str]:
    """An execution error: isError, ok false; returns (diagnostic codes, all messages and the text)."""
    assert result.is_error is True, text(result)
    structured = result.structured_content
    assert isinstance(structured, dict)
    assert structured["ok"] is False
    diagnostics = structured["diagnostics"]
    assert diagnostics
    codes = [d["code"] for d in diagnostics]
    messages = " ".join(d["message"] for d in diagnostics) + " " + text(result)
    return codes, messages


async def propose(session: Client, candidates: list[dict[str, Any]]) -> dict[str, Any]:
    """`engram_save` without elicitation: a preview with an approval token; returns its data."""
    preview = data(await session.call_tool("engram_save", {"candidates": candidates}))
    assert isinstance(preview.get("approval_token"), str) and preview["approval_token"]
    return preview


async def commit(session: Client, token: str, approve: str | list[int] = "all") -> CallToolResult:
    """`engram_commit` of `token` with `approve` ("all", or the candidates' numbers); its result."""
    return await session.call_tool("engram_commit", {"approval_token": token, "approve": approve})


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file directly in `folder`, by name (empty when it does not exist)."""
    if not folder.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
