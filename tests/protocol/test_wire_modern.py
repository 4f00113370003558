"""Wire tests for the 2026-07-28 era, served statelessly without initialize (SPEC §6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protocol.eras import META_CAPABILITIES as CAPS_KEY
from protocol.eras import META_SERVER_INFO as SERVER_INFO_KEY
from protocol.eras import META_VERSION as VERSION_KEY
from protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from tests.support.wire import MODERN_META, WireSession, error_of

CACHE_SCOPES = {"public", "private"}


def modern_result(reply: dict[str, Any]) -> dict[str, Any]:
    """Assert a modern success: resultType and the serverInfo _meta; return the result."""
    assert "error" not in reply, reply
    result: dict[str, Any] = reply["result"]
    assert result["resultType"] == "complete"
    info = result["_meta"][SERVER_INFO_KEY]
    assert info["name"] == "engram"
    assert isinstance(info["version"], str) and info["version"]
    return result


def versioned(s: WireSession, method: str, version: str) -> dict[str, Any]:
    """A modern request whose envelope names `version`."""
    return s.request(method, {"_meta": {VERSION_KEY: version, CAPS_KEY: {}}})


def assert_cacheable(result: dict[str, Any]) -> None:
    assert isinstance(result["ttlMs"], int) and not isinstance(result["ttlMs"], bool)
    assert result["ttlMs"] >= 0
    assert result["cacheScope"] in CACHE_SCOPES


def raw_meta(s: WireSession, method: str, meta: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request whose params._meta is exactly `meta` (no defaults filled in)."""
    return s.request(method, {**(params or {}), "_meta": meta})


# --- server/discover -------------------------------------------------------------------------


def test_server_discover_has_the_exact_2026_shape(workspace: Path) -> None:
    """server/discover answers resultType, supportedVersions, capabilities, instructions, caching and serverInfo _meta."""
    with WireSession(workspace) as s:
        result = modern_result(s.modern("server/discover"))
        assert set(result) == {
            "resultType",
            "supportedVersions",
            "capabilities",
            "instructions",
            "ttlMs",
            "cacheScope",
            "_meta",
        }
        assert "serverInfo" not in result
        assert result["supportedVersions"] == ["2026-07-28"]
        caps = result["capabilities"]
        assert set(caps) == {"tools", "resources", "prompts"}
        for name in caps:
            assert "listChanged" not in caps[name] and "subscribe" not in caps[name]
        assert isinstance(result["instructions"], str) and 0 < len(result["instructions"]) <= 512
        assert_cacheable(result)


def test_server_discover_without_envelope_is_invalid_params(workspace: Path) -> None:
    """server/discover without the modern envelope is refused with -32602."""
    with WireSession(workspace) as s:
        error_of(s.request("server/discover"), INVALID_PARAMS)
        error_of(s.request("server/discover", {}), INVALID_PARAMS)
        error_of(s.request("server/discover", {"_meta": {CAPS_KEY: {}}}), INVALID_PARAMS)


# --- results ---------------------------------------------------------------------------------


def test_every_modern_result_carries_result_type_and_server_info(workspace: Path) -> None:
    """Every modern result has resultType complete and _meta serverInfo, with no initialize at all."""
    with WireSession(workspace) as s:
        modern_result(s.modern("server/discover"))
        modern_result(s.modern("tools/list"))
        call = modern_result(s.call("engram_search", {"query": "uv"}, modern=True))
        assert call["isError"] is False
        assert call["structuredContent"]["ok"] is True
        modern_result(s.modern("resources/list"))
        modern_result(s.modern("resources/templates/list"))
        modern_result(s.modern("resources/read", {"uri": "engram://index"}))
        modern_result(s.modern("prompts/list"))
        prompt = modern_result(s.modern("prompts/get", {"name": "propose"}))
        assert prompt["messages"]
        failing = modern_result(s.call("engram_search", {"query": 5}, modern=True))
        assert failing["isError"] is True


def test_list_results_and_resources_read_carry_ttl_and_cache_scope(workspace: Path) -> None:
    """tools/list, prompts/list, resources/list, resources/templates/list and resources/read carry ttlMs and cacheScope."""
    with WireSession(workspace) as s:
        for method, params in [
            ("tools/list", None),
            ("prompts/list", None),
            ("resources/list", None),
            ("resources/templates/list", None),
            ("resources/read", {"uri": "engram://index"}),
        ]:
            assert_cacheable(modern_result(s.modern(method, params)))


def test_modern_tools_list_has_the_newest_tool_shape(workspace: Path) -> None:
    """A modern tools/list carries title, annotations and outputSchema for each tool."""
    with WireSession(workspace) as s:
        tools = modern_result(s.modern("tools/list"))["tools"]
        assert tools
        for tool in tools:
            assert {"name", "title", "description", "inputSchema", "outputSchema", "annotations"} <= set(tool)


# --- envelope validation ---------------------------------------------------------------------


def test_missing_client_capabilities_is_invalid_params_naming_the_key(workspace: Path) -> None:
    """A modern request without clientCapabilities is -32602 whose message names the key."""
    with WireSession(workspace) as s:
        error = error_of(raw_meta(s, "tools/list", {VERSION_KEY: "2026-07-28"}), INVALID_PARAMS)
        assert CAPS_KEY in error["message"]
        error = error_of(raw_meta(s, "server/discover", {VERSION_KEY: "2026-07-28"}), INVALID_PARAMS)
        assert CAPS_KEY in error["message"]


def test_non_object_client_capabilities_is_invalid_params(workspace: Path) -> None:
    """A modern request whose clientCapabilities is null, an array, a string or a number is -32602."""
    with WireSession(workspace) as s:
        caps: Any
        for caps in (None, [], "elicitation", 1):
            reply = raw_meta(s, "tools/list", {VERSION_KEY: "2026-07-28", CAPS_KEY: caps})
            error = error_of(reply, INVALID_PARAMS)
            assert CAPS_KEY in error["message"]


def test_unknown_future_version_is_unsupported_protocol_version(workspace: Path) -> None:
    """Envelope version 2099-01-01 is -32022 with data supported and requested."""
    with WireSession(workspace) as s:
        for method in ("server/discover", "tools/list"):
            error = error_of(versioned(s, method, "2099-01-01"), UNSUPPORTED_PROTOCOL_VERSION)
            assert error["data"] == {"supported": ["2026-07-28"], "requested": "2099-01-01"}


def test_legacy_version_in_the_envelope_is_unsupported_protocol_version(workspace: Path) -> None:
    """Envelope version 2025-11-25 is -32022 with data supported and requested, never served as legacy."""
    with WireSession(workspace) as s:
        for method in ("server/discover", "tools/list"):
            error = error_of(versioned(s, method, "2025-11-25"), UNSUPPORTED_PROTOCOL_VERSION)
            assert error["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}


REMOVED: list[tuple[str, dict[str, Any] | None]] = [
    ("ping", None),
    ("initialize", {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    ("logging/setLevel", {"level": "info"}),
    ("resources/subscribe", {"uri": "engram://index"}),
    ("subscriptions/listen", {}),
    ("engram_status", None),
    ("no/such/method", None),
]


def test_methods_removed_in_2026_are_method_not_found(workspace: Path) -> None:
    """Modern ping, enveloped initialize, logging/setLevel, resources/subscribe, subscriptions/listen and bare tools are -32601."""
    with WireSession(workspace) as s:
        for method, params in REMOVED:
            error_of(s.modern(method, params), METHOD_NOT_FOUND)
        # nothing of that opened a legacy session: an operation without envelope is still refused
        error_of(s.request("tools/list"), INVALID_PARAMS)


def test_resources_read_of_a_missing_memory_is_invalid_params_with_uri(workspace: Path) -> None:
    """Modern resources/read of an unknown memory is -32602 with data.uri."""
    uri = "engram://memory/does-not-exist"
    with WireSession(workspace) as s:
        error = error_of(s.modern("resources/read", {"uri": uri}), INVALID_PARAMS)
        assert error["data"]["uri"] == uri


# --- era per request -------------------------------------------------------------------------


def test_initialize_with_legacy_version_and_envelope_is_the_legacy_handshake(workspace: Path) -> None:
    """An initialize carrying params.protocolVersion and the envelope is the legacy handshake."""
    with WireSession(workspace) as s:
        reply = s.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
                "_meta": dict(MODERN_META),
            },
        )
        assert "error" not in reply, reply
        result = reply["result"]
        assert result["protocolVersion"] == "2025-06-18"
        assert "serverInfo" in result
        assert "resultType" not in result
        # the legacy session is open now
        tools = s.request("tools/list")["result"]["tools"]
        assert tools and "resultType" not in s.request("tools/list")["result"]


def test_discover_then_initialize_in_the_same_process_works(workspace: Path) -> None:
    """A client may probe with server/discover and then fall back to initialize in the same process."""
    with WireSession(workspace) as s:
        modern_result(s.modern("server/discover"))
        modern_result(s.modern("tools/list"))
        init = s.initialize("2025-11-25")
        assert init["result"]["protocolVersion"] == "2025-11-25"
        assert s.call("engram_status", {})["result"]["isError"] is False


def test_modern_requests_still_work_after_a_legacy_initialize(workspace: Path) -> None:
    """Modern requests after a 2024-11-05 initialize are served in the full 2026 shape."""
    with WireSession(workspace) as s:
        s.initialize("2024-11-05")
        tools = modern_result(s.modern("tools/list"))["tools"]
        assert all("outputSchema" in t and "title" in t for t in tools)
        call = modern_result(s.call("engram_search", {"query": "uv"}, modern=True))
        assert call["structuredContent"]["ok"] is True
        # and the legacy session keeps its own, down-levelled shape
        legacy = s.call("engram_search", {"query": "uv"})["result"]
        assert "structuredContent" not in legacy and "resultType" not in legacy


def test_modern_requests_are_stateless(workspace: Path) -> None:
    """A rejected modern request leaves no trace: the next well-formed one is served normally."""
    with WireSession(workspace) as s:
        error_of(versioned(s, "tools/list", "2099-01-01"), UNSUPPORTED_PROTOCOL_VERSION)
        error_of(raw_meta(s, "tools/list", {VERSION_KEY: "2026-07-28"}), INVALID_PARAMS)
        modern_result(raw_meta(s, "tools/list", {VERSION_KEY: "2026-07-28", CAPS_KEY: {"elicitation": {}}}))
        modern_result(s.modern("tools/list"))


def test_eight_pipelined_retries_with_one_request_state_save_one_note(workspace: Path) -> None:
    """Issue 9 / SPEC §4.3: eight retries sent at once with one requestState: one runs, seven get -32602."""
    working = workspace / ".engram" / "working"
    before = sorted(working.glob("*.md")) if working.is_dir() else []
    caps = {CAPS_KEY: {"elicitation": {}}}
    arguments = {"text": "Run the linters before every commit in this repository."}
    with WireSession(workspace) as s:
        first = s.modern("tools/call", {"name": "engram_note", "arguments": arguments}, **caps)
        asked = first["result"]
        assert asked["resultType"] == "input_required", asked
        (key,) = asked["inputRequests"]
        retry = {
            "name": "engram_note",
            "arguments": arguments,
            "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
            "requestState": asked["requestState"],
            "_meta": {**MODERN_META, **caps},
        }
        s.send_raw(
            b"".join(
                json.dumps(
                    {"jsonrpc": "2.0", "id": f"retry-{n}", "method": "tools/call", "params": retry}
                ).encode()
                + b"\n"
                for n in range(8)
            )
        )
        replies = [s.recv() for _ in range(8)]
    assert sorted(r["id"] for r in replies) == [f"retry-{n}" for n in range(8)]
    ran = [r for r in replies if "result" in r]
    assert len(ran) == 1, f"{len(ran)} of 8 retries ran"
    assert modern_result(ran[0])["isError"] is False
    for reply in replies:
        if reply is not ran[0]:
            assert "already used" in error_of(reply, INVALID_PARAMS)["message"]
    assert len(sorted(working.glob("*.md"))) == len(before) + 1
