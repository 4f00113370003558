"""Wire robustness: bad lines, bad envelopes, oversize input, concurrency, clean exit (SPEC §6, §11)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from protocol.eras import META_CAPABILITIES as CAPS_KEY
from protocol.eras import META_VERSION as VERSION_KEY
from protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from protocol.stdio import MAX_LINE_BYTES
from tests.support.wire import WireSession, assert_validation_refusal, error_of

FIVE_MIB = 5 * 1024 * 1024


def null_id_error(s: WireSession, code: int) -> dict[str, Any]:
    """The next message is an error with `"id": null` and `code`."""
    reply = s.recv()
    assert isinstance(reply, dict) and "id" in reply and reply["id"] is None, reply
    return error_of(reply, code)


def alive(s: WireSession) -> None:
    """The server still answers ping with {}."""
    reply = s.request("ping")
    assert reply["result"] == {}, reply


def oversized_line() -> bytes:
    """A syntactically valid request, 5 MiB long."""
    padding = "a" * FIVE_MIB
    return (
        json.dumps({"jsonrpc": "2.0", "id": "huge", "method": "ping", "params": {"pad": padding}}).encode()
        + b"\n"
    )


# --- framing ---------------------------------------------------------------------------------


def test_malformed_line_gets_parse_error_with_null_id_and_server_keeps_serving(workspace: Path) -> None:
    """A line that is not JSON gets -32700 with id null, and the next request is served."""
    with WireSession(workspace) as s:
        s.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"\n')
        null_id_error(s, PARSE_ERROR)
        s.send_raw(b"not json at all\n")
        null_id_error(s, PARSE_ERROR)
        s.send_raw(b"\xff\xfe\x00garbage\n")
        null_id_error(s, PARSE_ERROR)
        alive(s)


def test_blank_lines_are_ignored(workspace: Path) -> None:
    """Empty and whitespace-only lines get no response."""
    with WireSession(workspace) as s:
        s.send_raw(b"\n\n   \n\t\n\r\n")
        assert s.quiet()
        assert s.rest() == []


def test_five_mib_line_is_an_invalid_request_and_the_next_request_works(workspace: Path) -> None:
    """A 5 MiB line gets -32600 with id null, is skipped, and the next request is served."""
    with WireSession(workspace) as s:
        s.send_raw(oversized_line())
        null_id_error(s, INVALID_REQUEST)
        assert s.quiet()
        assert s.rest() == []


def test_non_object_json_value_is_an_invalid_request(workspace: Path) -> None:
    """A JSON value that is neither an object nor an array (42, "x", true, null, 3.5) gets -32600 with id null."""
    with WireSession(workspace) as s:
        for value in (b"42", b'"x"', b"true", b"null", b"3.5"):
            s.send_raw(value + b"\n")
            null_id_error(s, INVALID_REQUEST)
        alive(s)


def test_request_with_null_float_or_object_id_is_an_invalid_request(workspace: Path) -> None:
    """A request whose id is null, a float, an object, an array or a boolean gets -32600 with id null."""
    with WireSession(workspace) as s:
        for bad in (None, 1.5, {"a": 1}, [1], True):
            s.send({"jsonrpc": "2.0", "id": bad, "method": "ping"})
            null_id_error(s, INVALID_REQUEST)
        alive(s)


def test_request_without_jsonrpc_is_an_invalid_request(workspace: Path) -> None:
    """A request without "jsonrpc": "2.0" gets -32600 carrying its id."""
    with WireSession(workspace) as s:
        s.send({"id": 7, "method": "ping"})
        reply = s.recv()
        assert reply["id"] == 7
        error_of(reply, INVALID_REQUEST)
        s.send({"jsonrpc": "1.0", "id": "v1", "method": "ping"})
        reply = s.recv()
        assert reply["id"] == "v1"
        error_of(reply, INVALID_REQUEST)
        alive(s)


def padded_ping(id_: str, size: int) -> bytes:
    """A valid ping request whose line (without the newline) is exactly `size` bytes."""
    head = json.dumps({"jsonrpc": "2.0", "id": id_, "method": "ping", "params": {"pad": ""}})
    line = head[:-3] + "a" * (size - len(head)) + head[-3:]
    assert len(line) == size
    return line.encode() + b"\n"


def test_line_limit_is_4_mib(workspace: Path) -> None:
    """A line a little under 4 MiB is served; one a little over gets -32600 with id null."""
    limit = MAX_LINE_BYTES
    assert limit == 4 * 1024 * 1024  # SPEC §6
    with WireSession(workspace) as s:
        s.send_raw(padded_ping("under", limit - 1024))
        assert s.recv() == {"jsonrpc": "2.0", "id": "under", "result": {}}
        s.send_raw(padded_ping("over", limit + 1024))
        null_id_error(s, INVALID_REQUEST)
        alive(s)


def test_request_with_non_string_method_is_an_invalid_request(workspace: Path) -> None:
    """A request whose method is not a string gets -32600 carrying its id."""
    with WireSession(workspace) as s:
        s.send({"jsonrpc": "2.0", "id": 5, "method": 7})
        reply = s.recv()
        assert reply["id"] == 5
        error_of(reply, INVALID_REQUEST)
        alive(s)


def test_non_ascii_text_round_trips_as_utf8(workspace: Path) -> None:
    """A request with non-ASCII text is read as UTF-8 and answered in valid UTF-8."""
    with WireSession(workspace) as s:
        s.initialize()
        reply = s.call("engram_search", {"query": "café ☃ 日本"})
        assert reply["result"]["isError"] is False
        assert "café ☃ 日本" in reply["result"]["content"][0]["text"]
        s.raw_stdout[-1].decode("utf-8")


def test_errors_never_leak_a_traceback_or_an_absolute_path(workspace: Path) -> None:
    """Failing requests answer without a traceback and without the machine's absolute paths."""
    with WireSession(workspace) as s:
        s.initialize()
        s.call("engram_load", {"id": "does-not-exist"})
        s.call("engram_load", {"id": "../../etc/passwd"})
        s.call("engram_route", {"task": ""})
        s.call("engram_search", {"query": "x" * 5000})
        s.request("resources/read", {"uri": "engram://memory/../../etc/passwd"})
        s.request("resources/read", {"uri": "file:///etc/passwd"})
        s.request("prompts/get", {"name": "nope"})
        s.request("tools/list", {"cursor": "abc"})
        s.modern("resources/read", {"uri": "engram://memory/nope"})
        s.call("engram_search", {"query": ["uv"]}, modern=True)
        assert s.close() == 0
        wire = b"".join(s.raw_stdout).decode("utf-8")
        assert "Traceback" not in wire
        assert str(workspace.resolve()) not in wire and str(workspace) not in wire
        assert str(Path.home()) not in wire


# --- acceptance ------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_acceptance_one_session_survives_every_bad_input_and_still_searches(
    workspace: Path, era: str
) -> None:
    """ACCEPTANCE: one session takes every kind of bad input, answers each precisely, and still searches."""
    modern = era == "modern"
    with WireSession(workspace) as s:
        if not modern:
            assert s.initialize()["result"]["protocolVersion"] == "2025-11-25"

        def call(name: str, arguments: Any) -> dict[str, Any]:
            return s.call(name, arguments, modern=modern)

        # 1. malformed line
        s.send_raw(b'{"jsonrpc":"2.0","id":1,"method":\n')
        null_id_error(s, PARSE_ERROR)
        # 2. a 5 MiB line
        s.send_raw(oversized_line())
        null_id_error(s, INVALID_REQUEST)
        # 3. unknown method
        error_of(s.request("no/such/method", {}), METHOD_NOT_FOUND)
        # 4. modern request without clientCapabilities
        error = error_of(s.request("tools/list", {"_meta": {VERSION_KEY: "2026-07-28"}}), INVALID_PARAMS)
        assert CAPS_KEY in error["message"]
        # 5. modern request with version 2099-01-01
        error = error_of(
            s.request("tools/list", {"_meta": {VERSION_KEY: "2099-01-01", CAPS_KEY: {}}}),
            UNSUPPORTED_PROTOCOL_VERSION,
        )
        assert error["data"] == {"supported": ["2026-07-28"], "requested": "2099-01-01"}
        # 6. modern request with a legacy version in the envelope
        error = error_of(
            s.request("tools/list", {"_meta": {VERSION_KEY: "2025-11-25", CAPS_KEY: {}}}),
            UNSUPPORTED_PROTOCOL_VERSION,
        )
        assert error["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
        # 7. unknown tool
        error_of(call("engram_nope", {}), INVALID_PARAMS)
        # 8. wrong argument type
        assert_validation_refusal(call("engram_search", {"query": 5}), "query")
        # 9. unknown argument
        assert_validation_refusal(call("engram_search", {"query": "uv", "bogus": True}), "bogus")
        # 10. explicit null
        assert_validation_refusal(call("engram_search", {"query": "uv", "limit": None}), "limit")
        # 11. limit 0 and limit 10**9
        assert_validation_refusal(call("engram_search", {"query": "uv", "limit": 0}), "limit", (1, 50))
        assert_validation_refusal(call("engram_search", {"query": "uv", "limit": 10**9}), "limit", (1, 50))
        # 12. path traversal as a memory id
        assert_validation_refusal(call("engram_load", {"id": "../../etc/passwd"}), "id")
        # 13. resources/read of a missing memory
        uri = "engram://memory/does-not-exist"
        if modern:
            error = error_of(s.modern("resources/read", {"uri": uri}), INVALID_PARAMS)
        else:
            error = error_of(s.request("resources/read", {"uri": uri}), RESOURCE_NOT_FOUND)
        assert error["data"]["uri"] == uri
        # and then a valid search still works
        reply = call("engram_search", {"query": "uv"})
        result = reply["result"]
        assert result["isError"] is False
        assert result["structuredContent"]["ok"] is True
        assert result["structuredContent"]["data"]["entries"]
        if modern:
            assert result["resultType"] == "complete"
        assert s.rest() == []
        assert s.returncode == 0


# --- concurrency and cancellation ------------------------------------------------------------


def test_cancelling_an_unknown_request_is_ignored(workspace: Path) -> None:
    """notifications/cancelled for an id that is not in flight gets no response and changes nothing."""
    with WireSession(workspace) as s:
        s.initialize()
        for request_id in (999, "nope", None):
            s.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
            )
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled"})
        assert s.quiet()
        assert s.call("engram_status", {})["result"]["isError"] is False


def test_ping_is_answered_while_tool_calls_run(workspace: Path) -> None:
    """With 20 tools/call engram_load in flight, a ping is still answered, and every call is answered once."""
    with WireSession(workspace) as s:
        s.initialize()
        call_ids = [f"load-{n}" for n in range(20)]
        for id_ in call_ids:
            s.send(
                {
                    "jsonrpc": "2.0",
                    "id": id_,
                    "method": "tools/call",
                    "params": {"name": "engram_load", "arguments": {"query": f"task {id_}", "explain": True}},
                }
            )
        s.send({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
        seen: dict[Any, dict[str, Any]] = {}
        while "ping-1" not in seen or len(seen) < 21:
            reply = s.recv(timeout=20)
            assert reply["id"] not in seen, reply["id"]
            seen[reply["id"]] = reply
        assert seen["ping-1"]["result"] == {}
        for id_ in call_ids:
            assert seen[id_]["result"]["isError"] is False
        assert s.rest() == []


def test_a_queued_request_cancelled_before_it_runs_gets_no_response(workspace: Path) -> None:
    """notifications/cancelled for a request still in flight means no response for it; the others are answered."""
    with WireSession(workspace) as s:
        s.initialize()
        call_ids = [f"full-{n}" for n in range(40)]
        batch = b"".join(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": id_,
                    "method": "tools/call",
                    "params": {
                        "name": "engram_load",
                        "arguments": {"full": True, "explain": True, "budget_tokens": 32000},
                    },
                }
            ).encode()
            + b"\n"
            for id_ in call_ids
        )
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": call_ids[-1]},
        }
        s.send_raw(batch + json.dumps(cancel).encode() + b"\n")
        seen: set[Any] = set()
        while len(seen) < len(call_ids) - 1:
            reply = s.recv(timeout=20)
            assert reply["id"] != call_ids[-1], "the cancelled request was answered"
            seen.add(reply["id"])
        assert seen == set(call_ids[:-1])
        assert s.quiet()
        assert s.rest() == []
