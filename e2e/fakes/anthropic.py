"""Anthropic Messages API (`POST /v1/messages`, SSE when `stream: true`), for Claude Code.

Also answers `count_tokens` and the model list; anything else gets an empty JSON object.
"""

from __future__ import annotations

import json
from typing import Any

from e2e.fakes.script import Script, ToolCall, Turn
from e2e.fakes.server import Reply, Request, json_reply, sse_reply

LOADER = "ToolSearch"
"""Claude Code announces MCP tools by name only and loads their schemas through this tool."""
DEFERRED_MARK = "deferred tools are now available"


def respond(script: Script, request: Request) -> Reply:
    if request.path.endswith("/messages/count_tokens"):
        return json_reply({"input_tokens": 100})
    if request.path.endswith("/models"):
        return json_reply(
            {
                "data": [{"type": "model", "id": "claude-sonnet-4-5", "display_name": "fake"}],
                "has_more": False,
            }
        )
    if not request.path.endswith("/v1/messages") or not isinstance(request.body, dict):
        return json_reply({})
    body: dict[str, Any] = request.body
    messages = body.get("messages") or []
    referenced = _referenced(messages)
    tools = [
        str(tool.get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict) and (not tool.get("defer_loading") or tool.get("name") in referenced)
    ]
    texts = [
        text for message in messages if isinstance(message, dict) for text in _strings(message.get("content"))
    ]
    turn = Turn(tools, _deferred(messages), _history(messages), LOADER, texts)
    action = script.decide(turn)
    if isinstance(action, ToolCall):
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_e2e_{script.requests}",
            "name": action.name,
            "input": {},
        }
        delta = {"type": "input_json_delta", "partial_json": json.dumps(action.arguments)}
        stop = "tool_use"
        final = {**block, "input": action.arguments}
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": action.text}
        stop = "end_turn"
        final = {"type": "text", "text": action.text}
    model = str(body.get("model") or "claude-sonnet-4-5")
    message: dict[str, Any] = {
        "id": "msg_e2e",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    if not body.get("stream"):
        return json_reply({**message, "content": [final], "stop_reason": stop})
    return sse_reply(
        [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


def _deferred(messages: list[Any]) -> list[str]:
    """The names Claude Code lists after its "deferred tools are now available" reminder."""
    for text in _strings(messages):
        at = text.find(DEFERRED_MARK)
        if at >= 0:
            names = []
            for line in text[at:].splitlines()[1:]:
                if not line.strip():
                    break
                names.append(line.strip())
            return names
    return []


def _referenced(value: Any) -> set[str]:
    """Deferred tools a ToolSearch result loaded (`tool_reference` blocks): callable from then on."""
    if isinstance(value, list):
        return {name for item in value for name in _referenced(item)}
    if isinstance(value, dict):
        own = {str(value.get("tool_name"))} if value.get("type") == "tool_reference" else set()
        return own.union(*(_referenced(item) for item in value.values()))
    return set()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    return []


def _history(messages: list[Any]) -> list[tuple[str, str]]:
    names: dict[str, str] = {}
    found = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
            elif block.get("type") == "tool_result":
                name = names.get(str(block.get("tool_use_id")), "?")
                found.append((name, _text(block.get("content"))))
    return found


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return json.dumps(content)
