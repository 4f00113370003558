"""Deep JSON is refused, never an internal error (issue 9, SPEC §6): engram's tools in process.

Arguments nested 1,000 deep used to reach jsonschema, whose error message `repr`s the
instance and overflows Python's recursion limit: `ENGRAM_INTERNAL`. Now every request's
`params` are measured first (iteratively) and anything deeper than `MAX_PARAMS_DEPTH` is
`-32602` naming the limit, in both eras; JSON deeper than the parser's own limit is `-32700`
naming that limit. The session keeps serving after either.
"""

from __future__ import annotations

import io
from datetime import date
from pathlib import Path
from typing import Any

import orjson
import pytest

from engram_mcp.mcp.app import server_spec
from engram_mcp.mcp.tools.base import Flags
from protocol.bounds import MAX_JSON_DEPTH, MAX_PARAMS_DEPTH, depth_exceeds
from protocol.eras import META_CAPABILITIES, META_VERSION, MODERN_VERSIONS
from protocol.errors import INVALID_PARAMS, PARSE_ERROR
from protocol.loop import Server
from store.store import Store

MODERN_META = {
    META_VERSION: MODERN_VERSIONS[0],
    META_CAPABILITIES: {"elicitation": {}},
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}
TOOLS = ("engram_search", "engram_load", "engram_save", "engram_note", "engram_commit")


def nested(depth: int) -> bytes:
    """A JSON array nested `depth` deep, as text (json.dumps itself would overflow)."""
    return b"[" * depth + b'"x"' + b"]" * depth


def call_line(id_: str, tool: str, argument: bytes, *, modern: bool) -> bytes:
    meta = b',"_meta":' + orjson.dumps(MODERN_META) if modern else b""
    return (
        b'{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"%s","arguments":'
        b'{"query":%s,"text":%s,"candidates":%s,"approval_token":%s}%s}}'
        % (id_.encode(), tool.encode(), argument, argument, argument, argument, meta)
    )


def serve(workspace: Path, lines: list[bytes]) -> dict[Any, dict[str, Any]]:
    """Serve `lines` in process (in order) and return the replies by id."""
    store = Store(workspace, today=lambda: date(2026, 11, 29))
    out = io.BytesIO()
    stdin = io.BytesIO(b"".join(line + b"\n" for line in lines))
    Server(server_spec(store, Flags()), concurrent=False).serve(stdin, out)
    raw = out.getvalue()
    assert b"Traceback" not in raw and b"ENGRAM_INTERNAL" not in raw, raw[-2000:]
    replies = [orjson.loads(line) for line in raw.splitlines()]
    return {reply["id"]: reply for reply in replies}


def _refused_for_depth(reply: dict[str, Any]) -> None:
    assert "result" not in reply, str(reply)[:400]
    error = reply["error"]
    assert error["code"] == INVALID_PARAMS, error
    assert f"deeper than {MAX_PARAMS_DEPTH} levels" in error["message"], error
    assert error["data"] == {"maxDepth": MAX_PARAMS_DEPTH}


@pytest.mark.parametrize("modern", [False, True], ids=["legacy", "modern"])
def test_arguments_nested_1000_deep_are_refused_and_the_server_keeps_serving(
    workspace: Path, modern: bool
) -> None:
    """Issue 9: 1,000-deep arguments are -32602 naming the limit, never ENGRAM_INTERNAL."""
    lines = [orjson.dumps(INITIALIZE), orjson.dumps(INITIALIZED)]
    lines += [call_line(tool, tool, nested(1000), modern=modern) for tool in TOOLS]
    lines.append(orjson.dumps(PING))
    replies = serve(workspace, lines)
    for tool in TOOLS:
        _refused_for_depth(replies[tool])
    assert replies["ping"]["result"] == {}


@pytest.mark.parametrize("modern", [False, True], ids=["legacy", "modern"])
def test_arguments_just_past_the_limit_are_refused_and_at_the_limit_are_validated(
    workspace: Path, modern: bool
) -> None:
    """engram's choice: params may nest MAX_PARAMS_DEPTH levels; one more is refused."""
    # params -> arguments -> query -> N arrays: params depth is N + 2.
    at_limit = nested(MAX_PARAMS_DEPTH - 2)
    past_limit = nested(MAX_PARAMS_DEPTH - 1)
    meta = b',"_meta":' + orjson.dumps(MODERN_META) if modern else b""
    template = b'{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"engram_search","arguments":{"query":%s}%s}}'
    lines = [orjson.dumps(INITIALIZE), orjson.dumps(INITIALIZED)]
    lines += [template % (b"at", at_limit, meta), template % (b"past", past_limit, meta)]
    replies = serve(workspace, lines)
    at = replies["at"]["result"]
    assert at["isError"] is True
    assert "ENGRAM_VALIDATION" in at["content"][0]["text"] and "must be a string" in at["content"][0]["text"]
    _refused_for_depth(replies["past"])


def test_deep_input_responses_are_refused(workspace: Path) -> None:
    """A 2026-07-28 retry whose inputResponses nest 1,000 deep is -32602, not a crash."""
    line = (
        b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"engram_note",'
        b'"arguments":{"text":"Use uv"},"requestState":"a.b","inputResponses":{"confirm":'
        b'{"action":"accept","content":{"confirm":%s}}},"_meta":%s}}'
        % (nested(1000), orjson.dumps(MODERN_META))
    )
    replies = serve(workspace, [line, orjson.dumps(PING)])
    _refused_for_depth(replies["deep"])
    assert replies["ping"]["result"] == {}


def test_json_deeper_than_the_parser_allows_is_a_parse_error_naming_the_limit(workspace: Path) -> None:
    """A line nested past orjson's limit is -32700 with a message that says why."""
    line = b'{"jsonrpc":"2.0","id":"x","method":"ping","params":{"a":%s}}' % nested(MAX_JSON_DEPTH + 10)
    replies = serve(workspace, [line, orjson.dumps(PING)])
    error = replies[None]["error"]
    assert error["code"] == PARSE_ERROR
    assert f"deeper than {MAX_JSON_DEPTH} levels" in error["message"], error
    assert replies["ping"]["result"] == {}


def test_depth_check_is_iterative_and_exact() -> None:
    """The measure never recurses, so any Python value can be measured."""
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = [deep]
    assert depth_exceeds(deep, MAX_PARAMS_DEPTH)
    assert not depth_exceeds("scalar", 0)
    assert not depth_exceeds({"a": [1, {"b": []}]}, 4)
    assert depth_exceeds({"a": [1, {"b": []}]}, 3)
    wide = {str(n): [n] for n in range(10_000)}
    assert not depth_exceeds(wide, 2) and depth_exceeds(wide, 1)
