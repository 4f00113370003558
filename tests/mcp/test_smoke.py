from __future__ import annotations

from pathlib import Path

from tests.support.wire import WireSession


def test_server_answers_initialize_and_a_tool_call(workspace: Path) -> None:
    with WireSession(workspace) as s:
        init = s.initialize()
        assert init["result"]["protocolVersion"] == "2025-11-25"
        reply = s.call("engram_search", {"query": "uv"})
        assert reply["result"]["isError"] is False
        assert reply["result"]["structuredContent"]["data"]["entries"]
        assert s.close() == 0
