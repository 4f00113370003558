"""Gemini API (`models/<m>:streamGenerateContent?alt=sse`, `:generateContent`, `:countTokens`).

Gemini CLI reaches it through `GOOGLE_GEMINI_BASE_URL` with a dummy `GEMINI_API_KEY`. Requests
that ask for JSON (its model router and next-speaker checks) get one object that fills the
router's fields and nothing else: the CLI then keeps its default model.
"""

from __future__ import annotations

import json
from typing import Any

from e2e.fakes.script import Script, ToolCall, Turn
from e2e.fakes.server import Reply, Request, json_reply, sse_reply

ROUTER_ANSWER = {
    "reasoning": "scripted",
    "model_choice": "flash",
    "complexity_reasoning": "scripted",
    "complexity_score": 1,
}
USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def respond(script: Script, request: Request) -> Reply:
    if request.path.endswith(":countTokens"):
        return json_reply({"totalTokens": 10})
    body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
    generate = request.path.endswith((":generateContent", ":streamGenerateContent"))
    if not generate:
        return json_reply({"models": []} if request.path.endswith("/models") else {})
    config = body.get("generationConfig") or body.get("config") or {}
    if isinstance(config, dict) and config.get("responseMimeType") == "application/json":
        part: dict[str, Any] = {"text": json.dumps(ROUTER_ANSWER)}
    else:
        turn = Turn(_tool_names(body.get("tools") or []), history=_history(body.get("contents") or []))
        action = script.decide(turn)
        if isinstance(action, ToolCall):
            part = {
                "functionCall": {
                    "name": action.name,
                    "args": action.arguments,
                    "id": f"call_e2e_{script.requests}",
                }
            }
        else:
            part = {"text": action.text}
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": USAGE,
        "modelVersion": "gemini-e2e",
    }
    if request.path.endswith(":streamGenerateContent"):
        return sse_reply([(None, chunk)])
    return json_reply(chunk)


def _tool_names(tools: list[Any]) -> list[str]:
    return [
        str(declaration.get("name"))
        for tool in tools
        if isinstance(tool, dict)
        for declaration in tool.get("functionDeclarations") or []
        if isinstance(declaration, dict)
    ]


def _history(contents: list[Any]) -> list[tuple[str, str]]:
    found = []
    for content in contents:
        for part in content.get("parts") or [] if isinstance(content, dict) else []:
            answer = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(answer, dict):
                found.append((str(answer.get("name")), json.dumps(answer.get("response"))))
    return found
