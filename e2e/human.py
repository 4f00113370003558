"""The human at Claude Code's permission prompt, for a headless run: a tiny MCP server whose one
tool, `approve`, Claude Code calls instead of showing its prompt (`--permission-prompt-tool
mcp__human__approve`). It answers yes only for `engram_commit`, which the `/engram ss -f`
command says the host asks about, and no to anything else; every prompt is appended to the log
named in argv[1], so the e2e shows what the host asked the human. With `--elicitation LOG` it is
Claude Code's `Elicitation` hook instead: the human answering engram's own dialog.

Standard library only; stdout is the JSON-RPC stream.
"""

from __future__ import annotations

import json
import sys
from typing import Any

YES_TO = "engram_commit"
TOOL = {
    "name": "approve",
    "description": "The human's answer to a permission prompt.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "tool_name": {"type": "string"},
            "input": {"type": "object"},
            "tool_use_id": {"type": "string"},
        },
        "required": ["tool_name", "input"],
    },
}


def answer(message: dict[str, Any], log: str) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "human", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        asked = params.get("arguments") or {}
        name = str(asked.get("tool_name", ""))
        yes = name.endswith(YES_TO)
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps({"tool_name": name, "input": asked.get("input"), "answer": yes}) + "\n")
        decision = (
            {"behavior": "allow", "updatedInput": asked.get("input") or {}}
            if yes
            else {"behavior": "deny", "message": "The human said no."}
        )
        result = {"content": [{"type": "text", "text": json.dumps(decision)}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not found"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def _schema(value: Any) -> dict[str, Any] | None:
    """The form schema inside a hook's input, wherever the host put it."""
    if isinstance(value, dict):
        if isinstance(value.get("properties"), dict):
            return value
        for item in value.values():
            if (found := _schema(item)) is not None:
                return found
    return None


def elicitation(log: str) -> None:
    """Claude Code's `Elicitation` hook: the human reads engram's dialog and answers it with
    its defaults (every candidate ticked, the first scope); the dialog is logged."""
    asked = json.loads(sys.stdin.read() or "{}")
    schema = _schema(asked) or {"properties": {}}
    content = {}
    for name, field in schema["properties"].items():
        if isinstance(field, dict):
            if "default" in field:
                content[name] = field["default"]
            elif field.get("enum"):
                content[name] = field["enum"][0]
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps({"dialog": asked, "answer": content}) + "\n")
    output = {"hookEventName": "Elicitation", "action": "accept", "content": content}
    print(json.dumps({"hookSpecificOutput": output}))


def main() -> None:
    if sys.argv[1] == "--elicitation":
        elicitation(sys.argv[2])
        return
    log = sys.argv[1]
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = answer(message, log) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
