"""The real `engram-mcp` process driven by the official MCP Python SDK client (mcp 2.x), every mode.

`mcp.Client` validates each tool's `structuredContent` against the `outputSchema` it listed, so
a read tool call that comes back without raising proves the published schema is true.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import CallToolResult, TextContent, TextResourceContents

SERVER = str(Path(sys.executable).with_name("engram-mcp"))
MODES = ("legacy", "auto", "2026-07-28")
READ_TOOLS = {"engram_load", "engram_route", "engram_search", "engram_verify", "engram_status"}
WRITE_TOOLS = {
    "engram_save",
    "engram_save_session",
    "engram_commit",
    "engram_set_role",
    "engram_set_rule_variant",
    "engram_note",
}
TIMEOUT = 15.0
"""Per-request read timeout (seconds) given to the SDK."""
TEST_DEADLINE = 30.0
"""A whole test, spawn to exit."""

# SPEC §5 `data` keys per read tool.
LOAD_KEYS = {"selected_keys", "body_keys", "card_ids", "omitted_ids", "tokens"}
ROUTE_KEYS = {"task_class", "entries"}
ROUTE_ENTRY_KEYS = {"id", "type", "scope", "score", "reason"}
SEARCH_KEYS = {"entries", "backends_used"}
SEARCH_ENTRY_KEYS = {"id", "type", "scope", "score", "title", "snippet"}
VERIFY_KEYS = {"ok", "checked", "mismatched", "missing", "unindexed", "pending"}
STATUS_KEYS = {"workspace", "counts", "role", "rule_variant", "pending_proposals", "index"}


def _client(workspace: Path, mode: str) -> Client:
    params = StdioServerParameters(command=SERVER, args=[], cwd=str(workspace), env=dict(os.environ))
    return Client(params, mode=mode, read_timeout_seconds=TIMEOUT)


def _run(body: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(TEST_DEADLINE):
            await body()

    anyio.run(bounded)


def _envelope(result: CallToolResult) -> dict[str, Any]:
    """The tool answered normally: text first, structured envelope ok, data returned."""
    assert result.is_error is False, result
    assert result.content and isinstance(result.content[0], TextContent)
    assert result.content[0].text.strip()
    structured = result.structured_content
    assert isinstance(structured, dict)
    assert structured["contract_version"] == 1
    assert structured["ok"] is True
    assert isinstance(structured["diagnostics"], list)
    data = structured["data"]
    assert isinstance(data, dict)
    return data


def _assert_era(client: Client, mode: str) -> None:
    if mode == "legacy":
        assert client.protocol_version == "2025-11-25"
        assert client.session.discover_result is None
    else:
        assert client.protocol_version == "2026-07-28"
        assert client.session.discover_result is not None


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_lists_everything(workspace: Path, mode: str) -> None:
    async def body() -> None:
        async with _client(workspace, mode) as client:
            _assert_era(client, mode)
            if mode != "2026-07-28":
                # A pinned 2026-07-28 client never asks; the SDK synthesizes its DiscoverResult.
                assert client.server_info is not None and client.server_info.name == "engram"
                assert client.instructions and "engram_commit" in client.instructions
                caps = client.server_capabilities
                assert caps.tools is not None and caps.resources is not None and caps.prompts is not None

            tools = (await client.list_tools()).tools
            names = [t.name for t in tools]
            assert sorted(names) == sorted(READ_TOOLS | WRITE_TOOLS)
            for tool in tools:
                assert tool.input_schema.get("type") == "object"
                assert tool.output_schema is not None
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is (tool.name in READ_TOOLS)

            resources = (await client.list_resources()).resources
            uris = [str(r.uri) for r in resources]
            assert "engram://index" in uris
            assert all(u == "engram://index" or u.startswith("engram://memory/") for u in uris)

            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["engram://memory/{id}"]

            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == ["propose"]
            args = prompts[0].arguments or []
            assert [(a.name, bool(a.required)) for a in args] == [("topic", False)]

    _run(body)


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_calls_every_read_tool(workspace: Path, mode: str) -> None:
    async def body() -> None:
        async with _client(workspace, mode) as client:
            _assert_era(client, mode)
            # Listing first lets the SDK learn the output schemas it validates calls against.
            await client.list_tools()

            load = _envelope(
                await client.call_tool("engram_load", {"query": "set up the python environment"})
            )
            assert set(load) >= LOAD_KEYS
            assert load["selected_keys"]
            assert isinstance(load["tokens"], int) and load["tokens"] > 0

            explained = _envelope(
                await client.call_tool("engram_load", {"query": "fix invoice rounding", "explain": True})
            )
            assert LOAD_KEYS | {"reasons"} <= set(explained)
            assert isinstance(explained["reasons"], dict) and explained["reasons"]

            by_id_result = await client.call_tool("engram_load", {"id": "use-uv-for-python"})
            by_id = _envelope(by_id_result)
            assert set(by_id) >= LOAD_KEYS
            text = by_id_result.content[0]
            assert isinstance(text, TextContent) and "use-uv-for-python" in text.text

            route = _envelope(
                await client.call_tool("engram_route", {"task": "fix the flaky invoice export test"})
            )
            assert set(route) >= ROUTE_KEYS
            assert isinstance(route["task_class"], str) and route["task_class"]
            assert route["entries"]
            for entry in route["entries"]:
                assert set(entry) >= ROUTE_ENTRY_KEYS

            search = _envelope(await client.call_tool("engram_search", {"query": "uv python", "limit": 5}))
            assert set(search) >= SEARCH_KEYS
            assert 0 < len(search["entries"]) <= 5
            for entry in search["entries"]:
                assert set(entry) >= SEARCH_ENTRY_KEYS
            assert "use-uv-for-python" in [e["id"] for e in search["entries"]]
            assert search["backends_used"]

            verify = _envelope(await client.call_tool("engram_verify", {}))
            assert set(verify) >= VERIFY_KEYS
            assert isinstance(verify["ok"], bool)
            assert verify["checked"] > 0

            status = _envelope(await client.call_tool("engram_status", {}))
            assert set(status) >= STATUS_KEYS
            assert Path(status["workspace"]).resolve() == workspace.resolve()
            assert {"hash", "memories"} <= set(status["index"])

    _run(body)


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_reads_resources_and_prompts(workspace: Path, mode: str) -> None:
    async def body() -> None:
        async with _client(workspace, mode) as client:
            _assert_era(client, mode)

            index = (await client.read_resource("engram://index")).contents
            assert len(index) == 1 and isinstance(index[0], TextResourceContents)
            assert str(index[0].uri) == "engram://index"
            assert index[0].mime_type == "text/markdown"
            assert "use-uv-for-python" in index[0].text

            memory = (await client.read_resource("engram://memory/use-uv-for-python")).contents
            assert len(memory) == 1 and isinstance(memory[0], TextResourceContents)
            assert str(memory[0].uri) == "engram://memory/use-uv-for-python"
            assert memory[0].mime_type == "text/markdown"
            assert "use-uv-for-python" in memory[0].text

            plain = await client.get_prompt("propose")
            assert len(plain.messages) == 1
            plain_text = plain.messages[0].content
            assert plain.messages[0].role == "user"
            assert isinstance(plain_text, TextContent)
            assert "engram_save" in plain_text.text and "engram_commit" in plain_text.text
            assert "about:" not in plain_text.text

            topical = await client.get_prompt("propose", {"topic": "database migrations"})
            topical_text = topical.messages[0].content
            assert isinstance(topical_text, TextContent)
            assert "about: database migrations" in topical_text.text

    _run(body)


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_sees_both_error_planes(workspace: Path, mode: str) -> None:
    async def body() -> None:
        async with _client(workspace, mode) as client:
            _assert_era(client, mode)
            await client.list_tools()

            # Execution plane: a schema-breaking argument is a normal result with isError.
            bad = await client.call_tool("engram_search", {"query": "uv", "limit": 0})
            assert bad.is_error is True
            structured = bad.structured_content
            assert isinstance(structured, dict)
            assert structured["contract_version"] == 1
            assert structured["ok"] is False
            assert structured["diagnostics"]
            text = bad.content[0]
            assert isinstance(text, TextContent) and "limit" in text.text

            # Protocol plane: an unknown tool is a JSON-RPC error (-32602), raised by the SDK.
            with pytest.raises(MCPError) as raised:
                await client.call_tool("engram_no_such_tool", {})
            assert raised.value.error.code == -32602
            assert "engram_no_such_tool" in raised.value.error.message

            # The session survives both.
            assert (await client.call_tool("engram_status", {})).is_error is False

    _run(body)
