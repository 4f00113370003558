"""Wire tests for the legacy (initialize) era and the two tool-error planes (SPEC §6, §11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from protocol.eras import LEGACY_VERSIONS, META_SERVER_INFO
from protocol.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND
from tests.support.wire import MODERN_META, WireSession, assert_validation_refusal, error_of, result_of

OPERATION_REQUESTS: list[tuple[str, dict[str, Any] | None]] = [
    ("tools/list", None),
    ("tools/call", {"name": "engram_status", "arguments": {}}),
    ("resources/list", None),
    ("resources/templates/list", None),
    ("resources/read", {"uri": "engram://index"}),
    ("prompts/list", None),
    ("prompts/get", {"name": "propose"}),
    ("engram_status", None),
]


# --- initialize ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_initialize_echoes_a_served_legacy_version(workspace: Path, version: str) -> None:
    """initialize answers the client's protocolVersion when it is one engram serves."""
    with WireSession(workspace) as s:
        assert result_of(s.initialize(version))["protocolVersion"] == version


@pytest.mark.parametrize("requested", ["2026-07-28", "1900-01-01", "not-a-version"])
def test_initialize_answers_2025_11_25_for_an_unserved_version(workspace: Path, requested: str) -> None:
    """initialize answers 2025-11-25 for any version it does not serve, never echoing it."""
    with WireSession(workspace) as s:
        result = result_of(s.initialize(requested))
        assert result["protocolVersion"] == "2025-11-25"
        assert requested not in str(result)


def test_initialize_advertises_tools_resources_prompts_without_list_changed_or_subscribe(
    workspace: Path,
) -> None:
    """initialize advertises tools, resources and prompts, with no listChanged and no subscribe."""
    with WireSession(workspace) as s:
        caps = result_of(s.initialize())["capabilities"]
        assert set(caps) == {"tools", "resources", "prompts"}
        for name in ("tools", "resources", "prompts"):
            assert isinstance(caps[name], dict)
            assert "listChanged" not in caps[name]
            assert "subscribe" not in caps[name]


def test_initialize_returns_server_info_with_name_and_version(workspace: Path) -> None:
    """initialize carries serverInfo with a non-empty name and version."""
    with WireSession(workspace) as s:
        info = result_of(s.initialize())["serverInfo"]
        assert info["name"] == "engram"
        assert isinstance(info["version"], str) and info["version"]


def test_initialize_instructions_are_short_and_identical_to_discover(workspace: Path) -> None:
    """instructions are at most 512 characters and the same string as server/discover's."""
    with WireSession(workspace) as s:
        discovered = result_of(s.modern("server/discover"))["instructions"]
        instructions = result_of(s.initialize())["instructions"]
        assert isinstance(instructions, str) and 0 < len(instructions) <= 512
        assert instructions == discovered
        assert "engram_commit" in instructions


def test_initialize_without_protocol_version_is_invalid_params(workspace: Path) -> None:
    """initialize without params.protocolVersion is refused with -32602."""
    with WireSession(workspace) as s:
        reply = s.request("initialize", {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
        error_of(reply, INVALID_PARAMS)
        # the failed handshake did not open a session: a proper one still works
        assert result_of(s.initialize())["protocolVersion"] == "2025-11-25"


def test_second_initialize_is_an_invalid_request(workspace: Path) -> None:
    """A second initialize in the same process is refused with -32600."""
    with WireSession(workspace) as s:
        result_of(s.initialize())
        error_of(s.initialize("2025-06-18"), INVALID_REQUEST)
        # the first session is intact
        assert "structuredContent" in result_of(s.call("engram_status", {}))


# --- before initialize -----------------------------------------------------------------------


def test_ping_answers_empty_object_before_and_after_initialize(workspace: Path) -> None:
    """ping answers {} before initialize and after it."""
    with WireSession(workspace) as s:
        assert result_of(s.request("ping")) == {}
        result_of(s.initialize())
        assert result_of(s.request("ping")) == {}


def test_operations_before_initialize_are_invalid_params(workspace: Path) -> None:
    """Every operational request (and a bare tool method) before initialize is refused with -32602."""
    with WireSession(workspace) as s:
        for method, params in OPERATION_REQUESTS:
            error_of(s.request(method, params), INVALID_PARAMS)
        assert result_of(s.initialize())["protocolVersion"] == "2025-11-25"


def test_unknown_method_before_initialize_is_method_not_found(workspace: Path) -> None:
    """An unknown method before initialize is refused with -32601."""
    with WireSession(workspace) as s:
        error_of(s.request("no/such/method"), METHOD_NOT_FOUND)


def test_unknown_method_after_initialize_is_method_not_found(workspace: Path) -> None:
    """An unknown method after initialize is refused with -32601."""
    with WireSession(workspace) as s:
        s.initialize()
        error_of(s.request("no/such/method", {}), METHOD_NOT_FOUND)


# --- down-levelling --------------------------------------------------------------------------


def test_2024_11_05_session_gets_tools_without_newer_fields(workspace: Path) -> None:
    """A 2024-11-05 session's tools/list has no annotations, title, outputSchema or _meta."""
    with WireSession(workspace, "--always-load") as s:
        s.initialize("2024-11-05")
        tools = result_of(s.request("tools/list"))["tools"]
        assert tools
        for tool in tools:
            assert {"name", "description", "inputSchema"} <= set(tool)
            for key in ("annotations", "title", "outputSchema", "_meta"):
                assert key not in tool, (tool["name"], key)


def test_2024_11_05_session_gets_tool_results_without_structured_content(workspace: Path) -> None:
    """A 2024-11-05 session's tools/call result has content and isError but no structuredContent."""
    with WireSession(workspace) as s:
        s.initialize("2024-11-05")
        result = result_of(s.call("engram_search", {"query": "uv"}))
        assert "structuredContent" not in result
        assert result["isError"] is False
        assert result["content"][0]["type"] == "text" and result["content"][0]["text"]


def test_2024_11_05_session_gets_resources_and_prompts_without_titles(workspace: Path) -> None:
    """A 2024-11-05 session's resources/list and prompts/list carry no title."""
    with WireSession(workspace) as s:
        s.initialize("2024-11-05")
        for resource in result_of(s.request("resources/list"))["resources"]:
            assert "title" not in resource
        for template in result_of(s.request("resources/templates/list"))["resourceTemplates"]:
            assert "title" not in template
        for prompt in result_of(s.request("prompts/list"))["prompts"]:
            assert "title" not in prompt


def test_2025_03_26_session_keeps_annotations_but_not_title_or_output_schema(workspace: Path) -> None:
    """A 2025-03-26 session's tools carry annotations but no title and no outputSchema."""
    with WireSession(workspace) as s:
        s.initialize("2025-03-26")
        tools = result_of(s.request("tools/list"))["tools"]
        assert any("annotations" in t for t in tools)
        load = next(t for t in tools if t["name"] == "engram_load")
        assert load["annotations"]["readOnlyHint"] is True
        for tool in tools:
            assert "title" not in tool
            assert "outputSchema" not in tool
        result = result_of(s.call("engram_search", {"query": "uv"}))
        assert "structuredContent" not in result


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_2025_06_18_and_newer_sessions_get_output_schema_and_structured_content(
    workspace: Path, version: str
) -> None:
    """2025-06-18 and newer sessions see outputSchema, title and structuredContent."""
    with WireSession(workspace) as s:
        s.initialize(version)
        tools = result_of(s.request("tools/list"))["tools"]
        for tool in tools:
            assert tool["outputSchema"]["type"] == "object"
            assert "title" in tool
            assert "annotations" in tool
        result = result_of(s.call("engram_search", {"query": "uv"}))
        assert result["structuredContent"]["contract_version"] == 1
        assert result["structuredContent"]["ok"] is True
        assert result["isError"] is False


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
def test_legacy_results_carry_no_result_type_or_modern_fields(workspace: Path, version: str) -> None:
    """Legacy results carry no resultType, no serverInfo _meta and no caching fields."""
    with WireSession(workspace) as s:
        results = [result_of(s.initialize(version))]
        results.append(result_of(s.request("tools/list")))
        results.append(result_of(s.call("engram_search", {"query": "uv"})))
        results.append(result_of(s.request("resources/list")))
        results.append(result_of(s.request("resources/templates/list")))
        results.append(result_of(s.request("resources/read", {"uri": "engram://index"})))
        results.append(result_of(s.request("prompts/list")))
        results.append(result_of(s.request("prompts/get", {"name": "propose"})))
        for result in results:
            assert "resultType" not in result
            assert "ttlMs" not in result and "cacheScope" not in result
            assert META_SERVER_INFO not in (result.get("_meta") or {})


# --- batches ---------------------------------------------------------------------------------


def test_batch_is_answered_with_an_array_in_a_2025_03_26_session(workspace: Path) -> None:
    """A 2025-03-26 session's batch gets an array of answers with notification slots omitted."""
    with WireSession(workspace) as s:
        s.initialize("2025-03-26")
        s.send(
            [
                {"jsonrpc": "2.0", "id": "a", "method": "ping"},
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": 1, "progress": 1},
                },
                {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
                {"jsonrpc": "2.0", "id": "c", "method": "no/such/method"},
            ]
        )
        reply = s.recv()
        assert isinstance(reply, list)
        by_id = {item["id"]: item for item in reply}
        assert len(reply) == 3 and set(by_id) == {"a", "b", "c"}
        assert by_id["a"]["result"] == {}
        assert by_id["b"]["result"]["tools"]
        assert by_id["c"]["error"]["code"] == METHOD_NOT_FOUND
        assert s.rest() == []


def test_batch_is_refused_in_a_2025_11_25_session(workspace: Path) -> None:
    """A batch in a 2025-11-25 session is refused with one -32600 error, id null."""
    with WireSession(workspace) as s:
        s.initialize("2025-11-25")
        s.send(
            [{"jsonrpc": "2.0", "id": "a", "method": "ping"}, {"jsonrpc": "2.0", "id": "b", "method": "ping"}]
        )
        reply = s.recv()
        assert isinstance(reply, dict)
        assert reply["id"] is None
        error_of(reply, INVALID_REQUEST)
        assert s.quiet()
        assert s.rest() == []


def test_empty_batch_is_an_invalid_request(workspace: Path) -> None:
    """An empty batch is refused with -32600 and id null, even in a 2025-03-26 session."""
    with WireSession(workspace) as s:
        s.initialize("2025-03-26")
        s.send_raw(b"[]\n")
        reply = s.recv()
        assert isinstance(reply, dict) and reply["id"] is None
        error_of(reply, INVALID_REQUEST)
        assert result_of(s.request("ping")) == {}


# --- bare tool methods, resources, notifications, responses ------------------------------------


def test_bare_tool_method_returns_the_tools_text_as_a_string(workspace: Path) -> None:
    """A legacy request whose method is a tool's name returns the human text as a JSON string."""
    with WireSession(workspace) as s:
        s.initialize()
        text = result_of(s.request("engram_status"))
        assert isinstance(text, str)
        assert "memories:" in text
        structured = result_of(s.call("engram_status", {}))
        assert text == structured["content"][0]["text"]


def test_bare_tool_method_with_arguments_runs_the_tool(workspace: Path) -> None:
    """A bare tool method takes its arguments from params and still answers a string."""
    with WireSession(workspace) as s:
        s.initialize()
        text = result_of(s.request("engram_search", {"query": "uv"}))
        assert isinstance(text, str) and text


def test_resources_read_of_a_missing_memory_is_resource_not_found(workspace: Path) -> None:
    """Legacy resources/read of an unknown memory is -32002 with data.uri."""
    uri = "engram://memory/does-not-exist"
    with WireSession(workspace) as s:
        s.initialize()
        error = error_of(s.request("resources/read", {"uri": uri}), RESOURCE_NOT_FOUND)
        assert error["data"]["uri"] == uri


def test_notifications_are_never_answered(workspace: Path) -> None:
    """Notifications, known or unknown, before or after initialize, get no response."""
    with WireSession(workspace) as s:
        s.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"x": 1}})
        s.send({"jsonrpc": "2.0", "method": "tools/list"})
        assert s.quiet()
        s.initialize()
        s.send({"jsonrpc": "2.0", "method": "no/such/notification"})
        s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        s.send({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "nope"}})
        assert s.quiet()
        assert s.rest() == []


def test_response_with_an_unknown_id_is_ignored(workspace: Path) -> None:
    """A response whose id matches no server request is ignored silently."""
    with WireSession(workspace) as s:
        s.initialize()
        s.send({"jsonrpc": "2.0", "id": "engram-999", "result": {"action": "accept"}})
        s.send({"jsonrpc": "2.0", "id": 4242, "error": {"code": -1, "message": "x"}})
        assert s.quiet()
        assert s.rest() == []


# --- two error planes (both eras, one process: it is not pinned) ----------------------------


def _both_eras(s: WireSession, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Send the same tools/call as a legacy request and as a modern one; return both replies."""
    return [s.request("tools/call", params), s.request("tools/call", {**params, "_meta": dict(MODERN_META)})]


def test_unknown_tool_is_invalid_params(workspace: Path) -> None:
    """tools/call of an unknown tool is -32602 in both eras."""
    with WireSession(workspace) as s:
        s.initialize()
        for reply in _both_eras(s, {"name": "engram_nope", "arguments": {}}):
            error_of(reply, INVALID_PARAMS)


def test_tools_call_without_name_is_invalid_params(workspace: Path) -> None:
    """tools/call without params.name is -32602 in both eras."""
    with WireSession(workspace) as s:
        s.initialize()
        for reply in _both_eras(s, {"arguments": {"query": "uv"}}):
            error_of(reply, INVALID_PARAMS)


def test_tools_call_with_non_object_arguments_is_invalid_params(workspace: Path) -> None:
    """tools/call whose arguments are an array, a string or a number is -32602 in both eras."""
    with WireSession(workspace) as s:
        s.initialize()
        for arguments in (["uv"], "query=uv", 7):
            for reply in _both_eras(s, {"name": "engram_search", "arguments": arguments}):
                error_of(reply, INVALID_PARAMS)


ARGUMENT_CASES = [
    pytest.param("engram_search", {"query": 5}, "query", None, id="wrong-type"),
    pytest.param("engram_search", {"query": "uv", "bogus": 1}, "bogus", None, id="unknown-argument"),
    pytest.param("engram_search", {"query": None}, "query", None, id="explicit-null"),
    pytest.param("engram_search", {"query": "uv", "limit": 0}, "limit", (1, 50), id="limit-zero"),
    pytest.param("engram_search", {"query": "uv", "limit": 10**9}, "limit", (1, 50), id="limit-huge"),
    pytest.param("engram_load", {"id": "../../etc/passwd"}, "id", None, id="path-traversal-id"),
]


@pytest.mark.parametrize(("tool", "arguments", "argument", "bounds"), ARGUMENT_CASES)
def test_schema_breaking_arguments_are_a_tool_error_naming_the_argument(
    workspace: Path, tool: str, arguments: dict[str, Any], argument: str, bounds: tuple[int, int] | None
) -> None:
    """Arguments that break the tool's schema give isError with ENGRAM_VALIDATION naming the argument."""
    with WireSession(workspace) as s:
        s.initialize()
        for reply in _both_eras(s, {"name": tool, "arguments": arguments}):
            assert_validation_refusal(reply, argument, bounds)
        for reply in _both_eras(s, {"name": "engram_search", "arguments": {"query": "uv"}}):
            assert result_of(reply)["isError"] is False
