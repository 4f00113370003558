"""OpenAI Chat Completions (`POST /v1/chat/completions`, SSE when `stream: true`), for opencode's
OpenAI-compatible provider. Also answers the model list."""

from __future__ import annotations

import json
from typing import Any

from e2e.fakes.script import Script, ToolCall, Turn
from e2e.fakes.server import Reply, Request, json_reply, sse_reply

MODEL = "e2e-model"


def respond(script: Script, request: Request) -> Reply:
    if request.path.endswith("/models"):
        return json_reply({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "e2e"}]})
    if not request.path.endswith("/chat/completions") or not isinstance(request.body, dict):
        return json_reply({})
    body: dict[str, Any] = request.body
    tools = [
        str(tool["function"].get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict)
    ]
    action = script.decide(Turn(tools, history=_history(body.get("messages") or [])))
    base = {"id": f"chatcmpl-e2e-{script.requests}", "created": 0, "model": str(body.get("model") or MODEL)}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if isinstance(action, ToolCall):
        call = {
            "index": 0,
            "id": f"call_e2e_{script.requests}",
            "type": "function",
            "function": {"name": action.name, "arguments": json.dumps(action.arguments)},
        }
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": action.text}
        finish = "stop"
    if not body.get("stream"):
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return json_reply({**base, "object": "chat.completion", "choices": [choice], "usage": usage})
    chunk = {**base, "object": "chat.completion.chunk"}
    return sse_reply(
        [
            (None, {**chunk, "choices": [{"index": 0, "delta": message, "finish_reason": None}]}),
            (
                None,
                {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
            ),
            (None, "[DONE]"),
        ]
    )


def _history(messages: list[Any]) -> list[tuple[str, str]]:
    names: dict[str, str] = {}
    found = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                names[str(call.get("id"))] = str(call["function"].get("name"))
        if message.get("role") == "tool":
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            found.append((names.get(str(message.get("tool_call_id")), "?"), text))
    return found
