"""The scripted model's four wire formats, without any host: `pytest e2e/test_fakes.py`.

Not collected by `make test` (its testpaths are tests/); `make hosts-e2e` is the real check.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e.fakes import anthropic, gemini, openai_chat, openai_responses
from e2e.fakes.script import Script
from e2e.fakes.server import FakeModel, Responder

TOKEN = "engram-test-token"
ARGS = {"approval_token": TOKEN, "approve": "all"}


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[FakeModel] = []

    def start(api: Responder) -> tuple[FakeModel, Script]:
        script = Script(TOKEN, tmp_path / "model.jsonl")
        started.append(FakeModel(script, api))
        return started[-1], script

    yield start
    for fake in started:
        fake.close()


def post(url: str, body: dict[str, Any]) -> str:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return str(reply.read().decode())


def events(stream: str) -> list[Any]:
    return [
        json.loads(line[6:])
        for line in stream.splitlines()
        if line.startswith("data: ") and line[6:] != "[DONE]"
    ]


def test_anthropic_loads_a_deferred_commit_tool_then_calls_it_then_ends(serve: Any) -> None:
    fake, script = serve(anthropic.respond)
    reminder = "The following deferred tools are now available via ToolSearch.\nmcp__engram__engram_commit\nmcp__engram__engram_search\n\nmore"
    first: dict[str, Any] = {
        "stream": True,
        "tools": [{"name": "ToolSearch"}],
        "messages": [{"role": "user", "content": reminder}],
    }
    load = events(post(f"{fake.url}/v1/messages?beta=true", first))
    assert load[1]["content_block"]["name"] == "ToolSearch"
    assert json.loads(load[2]["delta"]["partial_json"]) == {"query": "select:mcp__engram__engram_commit"}
    loaded = [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "tool_reference", "tool_name": "mcp__engram__engram_commit"}],
                }
            ],
        },
    ]
    tools = [{"name": "ToolSearch"}, {"name": "mcp__engram__engram_commit", "defer_loading": True}]
    second = events(
        post(f"{fake.url}/v1/messages", {**first, "tools": tools, "messages": first["messages"] + loaded})
    )
    assert second[1]["content_block"]["name"] == "mcp__engram__engram_commit"
    assert json.loads(second[2]["delta"]["partial_json"]) == ARGS
    answered = loaded + [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t2", "name": "mcp__engram__engram_commit", "input": ARGS}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "needs permission"}],
        },
    ]
    last = events(
        post(f"{fake.url}/v1/messages", {**first, "tools": tools, "messages": first["messages"] + answered})
    )
    assert last[1]["content_block"]["type"] == "text"
    assert script.commit_results == ["needs permission"]
    assert "mcp__engram__engram_search" in script.offered


def test_responses_calls_a_namespaced_tool_with_its_namespace(serve: Any) -> None:
    fake, script = serve(openai_responses.respond)
    space = {
        "type": "namespace",
        "name": "mcp__engram",
        "tools": [{"type": "function", "name": "engram_commit"}],
    }
    stream = events(post(f"{fake.url}/v1/responses", {"tools": [space], "input": []}))
    item = stream[-1]["response"]["output"][0]
    assert (item["type"], item["namespace"], item["name"]) == (
        "function_call",
        "mcp__engram",
        "engram_commit",
    )
    assert json.loads(item["arguments"]) == ARGS
    output = {
        "type": "function_call_output",
        "call_id": item["call_id"],
        "output": [{"type": "input_text", "text": "denied"}],
    }
    done = events(post(f"{fake.url}/v1/responses", {"tools": [space], "input": [item, output]}))
    assert done[-1]["response"]["output"][0]["type"] == "message"
    assert script.offered == ["mcp__engram__engram_commit"]
    assert script.commit_results == ["denied"]


def test_gemini_calls_the_function_and_answers_router_questions_with_json(serve: Any) -> None:
    fake, script = serve(gemini.respond)
    tools = [{"functionDeclarations": [{"name": "engram_commit"}, {"name": "engram_search"}]}]
    stream = events(
        post(f"{fake.url}/v1beta/models/m:streamGenerateContent?alt=sse", {"tools": tools, "contents": []})
    )
    assert stream[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == ARGS
    router = json.loads(
        post(
            f"{fake.url}/v1beta/models/m:generateContent",
            {"generationConfig": {"responseMimeType": "application/json"}},
        )
    )
    assert "model_choice" in json.loads(router["candidates"][0]["content"]["parts"][0]["text"])
    assert script.offered == ["engram_commit", "engram_search"]


def test_chat_completions_calls_the_tool_and_ends_after_its_result(serve: Any) -> None:
    fake, script = serve(openai_chat.respond)
    tools = [{"type": "function", "function": {"name": "engram_engram_commit"}}]
    chunks = events(post(f"{fake.url}/v1/chat/completions", {"stream": True, "tools": tools, "messages": []}))
    call = chunks[0]["choices"][0]["delta"]["tool_calls"][0]
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (
        "engram_engram_commit",
        ARGS,
    )
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    history = [
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "rejected"},
    ]
    end = events(
        post(f"{fake.url}/v1/chat/completions", {"stream": True, "tools": tools, "messages": history})
    )
    assert end[0]["choices"][0]["delta"]["content"]
    assert script.commit_results == ["rejected"]


def test_a_request_without_tools_gets_text(serve: Any) -> None:
    fake, script = serve(openai_chat.respond)
    reply = json.loads(
        post(f"{fake.url}/v1/chat/completions", {"messages": [{"role": "user", "content": "title?"}]})
    )
    assert reply["choices"][0]["message"]["content"]
    assert script.commit_calls == []


def test_the_command_script_runs_what_the_installed_command_says(tmp_path: Path) -> None:
    """The model reads what to do from the expanded /engram text (a shell command, or
    engram_save_session then engram_commit); it does not know it."""
    from e2e.fakes.script import CommandScript
    from engram_mcp.hosts.link.slash_commands import render

    script = CommandScript("", tmp_path / "model.jsonl")
    fake = FakeModel(script, anthropic.respond)
    tools = [
        {"name": "Bash"},
        {"name": "mcp__engram__engram_save_session"},
        {"name": "mcp__engram__engram_commit"},
    ]
    shell_rule = (
        "The human's request: `/engram ss -f`\n\n1. `ss -f` with nothing after it: run "
        "`/opt/x/engram save-session --force` in the shell.\n"
    )
    try:
        call = events(
            post(
                f"{fake.url}/v1/messages",
                {"stream": True, "tools": tools, "messages": [{"role": "user", "content": shell_rule}]},
            )
        )
        assert call[1]["content_block"]["name"] == "Bash"
        assert json.loads(call[2]["delta"]["partial_json"])["command"] == "/opt/x/engram save-session --force"

        expanded = render("claude", "engram.md", "/opt/x/engram").split("\n---\n", 1)[1]
        expanded = expanded.replace("$ARGUMENTS", "ss -f")
        body = {"stream": True, "tools": tools, "messages": [{"role": "user", "content": expanded}]}
        call = events(post(f"{fake.url}/v1/messages", body))
        if "call the `engram_save_session` tool" in expanded:
            assert call[1]["content_block"]["name"] == "mcp__engram__engram_save_session"
            named = {"host": "claude"} if '`host` "claude"' in expanded else {}
            assert json.loads(call[2]["delta"]["partial_json"]) == {"query_level": 1, **named}
            preview = "1. Verdict: ADD\n   [rule] We lint\napproval_token: engram-0123abcd-" + "A" * 32
            answered = [
                {"role": "user", "content": expanded},
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "mcp__engram__engram_save_session",
                            "input": {},
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": preview}],
                },
            ]
            commit = events(post(f"{fake.url}/v1/messages", {**body, "messages": answered}))
            assert commit[1]["content_block"]["name"] == "mcp__engram__engram_commit"
            sent = json.loads(commit[2]["delta"]["partial_json"])
            assert sent == {"approval_token": "engram-0123abcd-" + "A" * 32, "approve": [1]}
        else:
            assert call[1]["content_block"]["name"] == "Bash"
        chat = {**body, "messages": [{"role": "user", "content": "Remember that we lint."}]}
        assert events(post(f"{fake.url}/v1/messages", chat))[1]["content_block"]["type"] == "text"
    finally:
        fake.close()


def test_the_shell_script_runs_each_command_through_the_offered_shell_tool(tmp_path: Path) -> None:
    """Codex's exec_command gets `cmd`, no login shell, and a terminal for the last command only."""
    from e2e.fakes.script import ShellScript

    script = ShellScript(
        "", tmp_path / "model.jsonl", commands=["engram commit T", "env engram commit T"], tty=True
    )
    fake = FakeModel(script, openai_responses.respond)
    try:
        body: dict[str, Any] = {"tools": [{"type": "function", "name": "exec_command"}], "input": []}
        first = [
            e
            for e in events(post(f"{fake.url}/v1/responses", body))
            if e["type"] == "response.output_item.done"
        ]
        assert json.loads(first[0]["item"]["arguments"]) == {"cmd": "engram commit T", "login": False}
        body["input"] = [
            {"type": "function_call", "call_id": "c1", "name": "exec_command"},
            {"type": "function_call_output", "call_id": "c1", "output": "ENGRAM_AGENT_SHELL: refused"},
        ]
        second = [
            e
            for e in events(post(f"{fake.url}/v1/responses", body))
            if e["type"] == "response.output_item.done"
        ]
        assert json.loads(second[0]["item"]["arguments"]) == {
            "cmd": "env engram commit T",
            "login": False,
            "tty": True,
        }
        assert script.shell_results == ["ENGRAM_AGENT_SHELL: refused"] and script.shell_tool == "exec_command"
    finally:
        fake.close()
