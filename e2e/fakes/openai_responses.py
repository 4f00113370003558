"""OpenAI Responses API (`POST /v1/responses`, SSE), for Codex through a `model_providers` entry.

Also answers the model list Codex may ask for; anything else gets an empty JSON object.
"""

from __future__ import annotations

import json
from typing import Any

from e2e.fakes.script import Script, Text, ToolCall, Turn
from e2e.fakes.server import Reply, Request, json_reply, sse_reply

MODEL = "gpt-5.1-codex"


def respond(script: Script, request: Request) -> Reply:
    if request.path.endswith("/models"):
        return json_reply(
            {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "e2e"}], "models": []}
        )
    if not request.path.endswith("/responses") or not isinstance(request.body, dict):
        return json_reply({})
    body: dict[str, Any] = request.body
    items = body.get("input") if isinstance(body.get("input"), list) else []
    spelled = _tool_names(body.get("tools") or [])
    action = script.decide(Turn(list(spelled), history=_history(items or [])))
    call_id = f"call_e2e_{script.requests}"
    if isinstance(action, ToolCall):
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            **spelled[action.name],
            "arguments": json.dumps(action.arguments),
            "status": "completed",
        }
    else:
        item = _message(action)
    response = {"id": f"resp_{call_id}", "object": "response", "model": str(body.get("model") or MODEL)}
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    return sse_reply(
        [
            (
                "response.created",
                {"type": "response.created", "response": {**response, "status": "in_progress"}},
            ),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {**response, "status": "completed", "output": [item], "usage": usage},
                },
            ),
        ]
    )


def _message(action: Text) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_e2e",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": action.text, "annotations": []}],
    }


def _tool_names(tools: list[Any]) -> dict[str, dict[str, str]]:
    """Each function the model may call, flattened name -> how a call names it.

    Codex groups MCP tools in namespaces (`{"type": "namespace", "name": "mcp__engram", "tools":
    [...]}`); a call then carries `namespace` and the bare `name`. The flattened spelling is
    `mcp__engram__engram_commit`, the name Codex's own docs and logs use.
    """
    names: dict[str, dict[str, str]] = {}
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("tools"), list):
            space = str(tool.get("name") or "")
            for name in _tool_names(tool["tools"]):
                names[f"{space.removesuffix('__')}__{name}"] = {"namespace": space, "name": name}
        elif tool.get("name"):
            names[str(tool["name"])] = {"name": str(tool["name"])}
    return names


def _history(items: list[Any]) -> list[tuple[str, str]]:
    names: dict[str, str] = {}
    found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            space = str(item.get("namespace") or "").removesuffix("__")
            names[str(item.get("call_id"))] = (
                f"{space}__{item.get('name')}" if space else str(item.get("name"))
            )
        elif item.get("type") == "function_call_output":
            output = item.get("output")
            if isinstance(output, list):  # content parts: [{"type": "input_text", "text": ...}]
                text = "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
            else:
                text = output if isinstance(output, str) else json.dumps(output)
            found.append((names.get(str(item.get("call_id")), "?"), text))
    return found
