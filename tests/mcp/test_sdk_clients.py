"""engram driven by the official MCP Python SDK client (mcp 2.x), in every mode (tests/support/sdk.py).

The server runs in this process behind the SDK; tests/process/test_process.py drives the real
`engram-mcp` process with the same client, once per mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import MCPError
from mcp.types import TextContent, TextResourceContents

from engram_mcp.mcp.app import server_spec
from engram_mcp.mcp.tools import WRITE_TOOLS
from engram_mcp.mcp.tools.base import Flags
from protocol.errors import INVALID_PARAMS
from store.store import Store
from tests.support.sdk import MODES, assert_era, client, run
from tests.support.sdk import data as _envelope

# SPEC §5 `data` keys per read tool.
LOAD_KEYS = {"selected_keys", "body_keys", "card_ids", "omitted_ids", "tokens"}
ROUTE_KEYS = {"task_class", "entries"}
ROUTE_ENTRY_KEYS = {"id", "type", "scope", "score", "reason"}
SEARCH_KEYS = {"entries", "backends_used"}
SEARCH_ENTRY_KEYS = {"id", "type", "scope", "score", "title", "snippet"}
VERIFY_KEYS = {"ok", "checked", "mismatched", "missing", "unindexed", "pending"}
STATUS_KEYS = {"workspace", "counts", "role", "rule_variant", "pending_proposals", "index"}


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_lists_everything(workspace: Path, mode: str) -> None:
    async def body() -> None:
        async with client(workspace, mode) as session:
            assert_era(session, mode)
            if mode != "2026-07-28":
                # A pinned 2026-07-28 client never asks; the SDK synthesizes its DiscoverResult.
                assert session.server_info is not None and session.server_info.name == "engram"
                assert session.instructions and "engram_commit" in session.instructions
                caps = session.server_capabilities
                assert caps.tools is not None and caps.resources is not None and caps.prompts is not None

            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            assert sorted(names) == sorted(t.name for t in server_spec(Store(workspace), Flags()).tools)
            for tool in tools:
                assert tool.input_schema.get("type") == "object"
                assert tool.output_schema is not None
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is (tool.name not in WRITE_TOOLS)

            resources = (await session.list_resources()).resources
            uris = [str(r.uri) for r in resources]
            assert "engram://index" in uris
            assert all(u == "engram://index" or u.startswith("engram://memory/") for u in uris)

            templates = (await session.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["engram://memory/{id}"]

            prompts = (await session.list_prompts()).prompts
            assert [p.name for p in prompts] == ["propose"]
            args = prompts[0].arguments or []
            assert [(a.name, bool(a.required)) for a in args] == [("topic", False)]

    run(body)


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_calls_every_read_tool(workspace: Path, mode: str) -> None:
    async def body() -> None:
        async with client(workspace, mode) as session:
            assert_era(session, mode)
            # Listing first lets the SDK learn the output schemas it validates calls against.
            await session.list_tools()

            load = _envelope(
                await session.call_tool("engram_load", {"query": "set up the python environment"})
            )
            assert set(load) >= LOAD_KEYS
            assert load["selected_keys"]
            assert isinstance(load["tokens"], int) and load["tokens"] > 0

            explained = _envelope(
                await session.call_tool("engram_load", {"query": "fix invoice rounding", "explain": True})
            )
            assert LOAD_KEYS | {"reasons"} <= set(explained)
            assert isinstance(explained["reasons"], dict) and explained["reasons"]

            by_id_result = await session.call_tool("engram_load", {"id": "use-uv-for-python"})
            by_id = _envelope(by_id_result)
            assert set(by_id) >= LOAD_KEYS
            text = by_id_result.content[0]
            assert isinstance(text, TextContent) and "use-uv-for-python" in text.text

            route = _envelope(
                await session.call_tool("engram_route", {"task": "fix the flaky invoice export test"})
            )
            assert set(route) >= ROUTE_KEYS
            assert isinstance(route["task_class"], str) and route["task_class"]
            assert route["entries"]
            for entry in route["entries"]:
                assert set(entry) >= ROUTE_ENTRY_KEYS

            search = _envelope(await session.call_tool("engram_search", {"query": "uv python", "limit": 5}))
            assert set(search) >= SEARCH_KEYS
            assert 0 < len(search["entries"]) <= 5
            for entry in search["entries"]:
                assert set(entry) >= SEARCH_ENTRY_KEYS
            assert "use-uv-for-python" in [e["id"] for e in search["entries"]]
            assert search["backends_used"]

            verify = _envelope(await session.call_tool("engram_verify", {}))
            assert set(verify) >= VERIFY_KEYS
            assert isinstance(verify["ok"], bool)
            assert verify["checked"] > 0

            status = _envelope(await session.call_tool("engram_status", {}))
            assert set(status) >= STATUS_KEYS
            assert Path(status["workspace"]).resolve() == workspace.resolve()
            assert {"hash", "memories"} <= set(status["index"])

    run(body)


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_reads_resources_and_prompts(workspace: Path, mode: str) -> None:
    async def body() -> None:
        async with client(workspace, mode) as session:
            assert_era(session, mode)

            index = (await session.read_resource("engram://index")).contents
            assert len(index) == 1 and isinstance(index[0], TextResourceContents)
            assert str(index[0].uri) == "engram://index"
            assert index[0].mime_type == "text/markdown"
            assert "use-uv-for-python" in index[0].text

            memory = (await session.read_resource("engram://memory/use-uv-for-python")).contents
            assert len(memory) == 1 and isinstance(memory[0], TextResourceContents)
            assert str(memory[0].uri) == "engram://memory/use-uv-for-python"
            assert memory[0].mime_type == "text/markdown"
            assert "use-uv-for-python" in memory[0].text

            plain = await session.get_prompt("propose")
            assert len(plain.messages) == 1
            plain_text = plain.messages[0].content
            assert plain.messages[0].role == "user"
            assert isinstance(plain_text, TextContent)
            assert "engram_save" in plain_text.text and "engram_commit" in plain_text.text
            assert "about:" not in plain_text.text

            topical = await session.get_prompt("propose", {"topic": "database migrations"})
            topical_text = topical.messages[0].content
            assert isinstance(topical_text, TextContent)
            assert "about: database migrations" in topical_text.text

    run(body)


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_sees_both_error_planes(workspace: Path, mode: str) -> None:
    async def body() -> None:
        async with client(workspace, mode) as session:
            assert_era(session, mode)
            await session.list_tools()

            # Execution plane: a schema-breaking argument is a normal result with isError.
            bad = await session.call_tool("engram_search", {"query": "uv", "limit": 0})
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
                await session.call_tool("engram_no_such_tool", {})
            assert raised.value.error.code == INVALID_PARAMS
            assert "engram_no_such_tool" in raised.value.error.message

            # The session survives both.
            assert (await session.call_tool("engram_status", {})).is_error is False

    run(body)
