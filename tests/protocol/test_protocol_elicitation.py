"""The protocol layer's question path (SPEC §4.3, §6; PROTOCOL §11–12), in process, no engram tools.

A test-only tool is a generator handler that yields one `Elicit` and records what it received
only after its last `yield`. `protocol.loop.Server` is served over a pair of OS pipes in a
thread and this module plays the client: legacy sessions get a server-initiated
`elicitation/create`, 2026-07-28 requests get `input_required` and retry with `inputResponses`.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import replace
from typing import Any

import pytest

import protocol.loop
from protocol.elicitation import (
    STATE_TTL_SECONDS,
    NeedInput,
    StateSealer,
    drive_live,
    drive_rounds,
    elicitation_params,
    form_capable,
    parse_answer,
)
from protocol.eras import META_CAPABILITIES, META_SERVER_INFO, META_VERSION, MODERN_VERSIONS
from protocol.errors import InvalidParams
from protocol.loop import Server
from protocol.spec import CallContext, Elicit, ElicitAnswer, Resources, ServerSpec, Tool, ToolResult
from tests.support.wire import error_of

CONFIRM_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}
CONFIRM_MESSAGE = "Write the test record?"
INPUT_SCHEMA = {
    "type": "object",
    "properties": {"label": {"type": "string", "maxLength": 50}},
    "additionalProperties": False,
}
MODERN = MODERN_VERSIONS[0]


# --- the test-only application --------------------------------------------------------------


class Recorder:
    """What the handlers received; appended to only after a handler's last `yield`."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.release = threading.Event()
        """`ask_confirm` waits for this after its last `yield` (set: no wait), to hold calls open."""
        self.release.set()

    def add(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.calls.append(entry)

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.calls)


def _answer_data(answer: ElicitAnswer) -> dict[str, Any]:
    return {"action": answer.action, "content": answer.content}


def make_spec(recorder: Recorder, **overrides: Any) -> ServerSpec:
    def ask_confirm(
        arguments: dict[str, Any], ctx: CallContext
    ) -> Generator[Elicit, ElicitAnswer, ToolResult]:
        answer = yield Elicit(key="confirm", message=CONFIRM_MESSAGE, schema=CONFIRM_SCHEMA)
        recorder.release.wait(timeout=10)
        received = {"tool": "ask_confirm", "arguments": arguments, **_answer_data(answer)}
        recorder.add(received)
        return ToolResult(text=f"received {answer.action}", structured=received)

    def ask_other(arguments: dict[str, Any], ctx: CallContext) -> Generator[Elicit, ElicitAnswer, ToolResult]:
        answer = yield Elicit(key="confirm", message=CONFIRM_MESSAGE, schema=CONFIRM_SCHEMA)
        received = {"tool": "ask_other", "arguments": arguments, **_answer_data(answer)}
        recorder.add(received)
        return ToolResult(text=f"received {answer.action}", structured=received)

    def ask_twice(arguments: dict[str, Any], ctx: CallContext) -> Generator[Elicit, ElicitAnswer, ToolResult]:
        first = yield Elicit(key="confirm", message=CONFIRM_MESSAGE, schema=CONFIRM_SCHEMA)
        second = yield Elicit(key="name", message="Name it", schema=NAME_SCHEMA)
        received = {
            "tool": "ask_twice",
            "arguments": arguments,
            "first": _answer_data(first),
            "second": _answer_data(second),
        }
        recorder.add(received)
        return ToolResult(text="received both", structured=received)

    def tool(name: str, handler: Any) -> Tool:
        return Tool(name=name, description=f"test-only {name}", input_schema=INPUT_SCHEMA, handler=handler)

    base = ServerSpec(
        name="elicitation-test",
        version="0.0.1",
        instructions="test server",
        tools=(tool("ask_confirm", ask_confirm), tool("ask_other", ask_other), tool("ask_twice", ask_twice)),
        resources=Resources(lambda: [], (), lambda uri: None),
        prompts=(),
        tool_error=lambda code, message: ToolResult(text=message, structured={"code": code}, is_error=True),
        state_binding="test-binding",
    )
    return replace(base, **overrides)


# --- an in-process client over OS pipes -------------------------------------------------------


class PipeClient:
    """Runs `server.serve` in a thread over two OS pipes; sends and receives JSON lines."""

    def __init__(self, server: Server) -> None:
        c2s_read, c2s_write = os.pipe()
        s2c_read, s2c_write = os.pipe()
        self._server_in = os.fdopen(c2s_read, "rb")
        self._server_out = os.fdopen(s2c_write, "wb", buffering=0)
        self._to_server = os.fdopen(c2s_write, "wb", buffering=0)
        self._from_server = os.fdopen(s2c_read, "rb")
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._ids = iter(range(1, 1_000_000))
        self.server = server
        self._serve_thread = threading.Thread(target=self._serve, daemon=True)
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._serve_thread.start()
        self._pump_thread.start()

    def _serve(self) -> None:
        try:
            self.server.serve(self._server_in, self._server_out)
        finally:
            self._server_out.close()

    def _pump(self) -> None:
        for line in self._from_server:
            self._lines.put(line)
        self._lines.put(None)

    # sending
    def send(self, message: Any) -> None:
        self._to_server.write(json.dumps(message).encode() + b"\n")

    def next_id(self) -> int:
        return next(self._ids)

    def request(self, method: str, params: Any = None) -> int:
        id_ = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return id_

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # receiving
    def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server within {timeout} s") from None
        if line is None:
            raise AssertionError("the server closed its output")
        message: dict[str, Any] = json.loads(line)
        return message

    def quiet(self, wait: float = 0.4) -> bool:
        """True when the server sends nothing for `wait` seconds."""
        try:
            line = self._lines.get(timeout=wait)
        except queue.Empty:
            return True
        self._lines.put(line)
        return False

    def reply_to(self, id_: int, timeout: float = 5.0) -> dict[str, Any]:
        message = self.recv(timeout)
        assert message.get("id") == id_ and "method" not in message, message
        return message

    def call(self, method: str, params: Any = None, timeout: float = 5.0) -> dict[str, Any]:
        return self.reply_to(self.request(method, params), timeout)

    # legacy lifecycle
    def initialize(
        self,
        version: str = "2025-11-25",
        capabilities: dict[str, Any] | None = None,
        *,
        initialized: bool = True,
    ) -> dict[str, Any]:
        reply = self.call(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        assert reply["result"]["protocolVersion"] == version
        if initialized:
            self.notify("notifications/initialized")
        return reply

    # modern envelope
    def modern_call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        capabilities: dict[str, Any] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}, **extra}
        params["_meta"] = {
            META_VERSION: MODERN,
            META_CAPABILITIES: {"elicitation": {}} if capabilities is None else capabilities,
        }
        return self.call("tools/call", params)

    def eof(self) -> list[dict[str, Any]]:
        """Close the server's input; return what it still sent before closing its output."""
        self._to_server.close()
        self._serve_thread.join(timeout=5)
        assert not self._serve_thread.is_alive(), "serve() did not return after EOF"
        rest: list[dict[str, Any]] = []
        while (line := self._lines.get(timeout=5)) is not None:
            rest.append(json.loads(line))
        return rest

    def close(self) -> None:
        if not self._to_server.closed:
            self._to_server.close()
        self._serve_thread.join(timeout=10)
        self._pump_thread.join(timeout=5)
        self._from_server.close()
        self._server_in.close()
        if not self._server_out.closed:
            self._server_out.close()
        assert not self._serve_thread.is_alive(), "serve() did not return after EOF"


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def connect() -> Iterator[Any]:
    """connect(server) -> PipeClient; every client is closed after the test."""
    clients: list[PipeClient] = []

    def factory(server: Server) -> PipeClient:
        client = PipeClient(server)
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.close()


def _structured(reply: dict[str, Any]) -> dict[str, Any]:
    result = reply["result"]
    assert result["isError"] is False, result
    structured: dict[str, Any] = result["structuredContent"]
    return structured


# --- legacy: server-initiated elicitation/create ----------------------------------------------


def _legacy_elicitation(
    client: PipeClient, arguments: dict[str, Any] | None = None
) -> tuple[int, dict[str, Any]]:
    """Start a tools/call and return (call id, the elicitation/create request it caused)."""
    call_id = client.request("tools/call", {"name": "ask_confirm", "arguments": arguments or {"label": "x"}})
    question = client.recv()
    assert question.get("method") == "elicitation/create", question
    assert "id" in question and question["id"] != call_id
    return call_id, question


def test_legacy_accept_reaches_the_handler(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id, question = _legacy_elicitation(client, {"label": "first"})
    assert question["jsonrpc"] == "2.0"
    assert question["params"]["mode"] == "form"
    assert question["params"]["message"] == CONFIRM_MESSAGE
    assert question["params"]["requestedSchema"] == CONFIRM_SCHEMA
    assert recorder.snapshot() == []  # nothing happens before the answer

    client.send(
        {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"confirm": True}}}
    )
    structured = _structured(client.reply_to(call_id))
    assert structured == {
        "tool": "ask_confirm",
        "arguments": {"label": "first"},
        "action": "accept",
        "content": {"confirm": True},
    }
    assert recorder.snapshot() == [structured]


def test_legacy_decline_reaches_the_handler(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id, question = _legacy_elicitation(client)
    client.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
    structured = _structured(client.reply_to(call_id))
    assert structured["action"] == "decline"
    assert structured["content"] is None


def test_legacy_cancel_action_reaches_the_handler(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id, question = _legacy_elicitation(client)
    client.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "cancel"}})
    assert _structured(client.reply_to(call_id))["action"] == "cancel"


def test_legacy_error_response_is_action_error(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id, question = _legacy_elicitation(client)
    client.send(
        {"jsonrpc": "2.0", "id": question["id"], "error": {"code": -32602, "message": "mode not supported"}}
    )
    assert _structured(client.reply_to(call_id))["action"] == "error"


def test_legacy_malformed_answer_is_action_error(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id, question = _legacy_elicitation(client)
    client.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "maybe"}})
    assert _structured(client.reply_to(call_id))["action"] == "error"


def test_legacy_no_answer_is_timeout(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder, elicitation_timeout=0.5)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id, question = _legacy_elicitation(client)
    structured = _structured(client.reply_to(call_id, timeout=5))
    assert structured["action"] == "timeout"
    # A late answer to the expired question is ignored; the server keeps serving.
    client.send(
        {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"confirm": True}}}
    )
    assert client.call("ping")["result"] == {}
    assert [c["action"] for c in recorder.snapshot()] == ["timeout"]


def test_legacy_2025_06_18_gets_no_mode(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-06-18", {"elicitation": {}})
    call_id, question = _legacy_elicitation(client)
    assert "mode" not in question["params"]
    assert question["params"]["message"] == CONFIRM_MESSAGE
    assert question["params"]["requestedSchema"] == CONFIRM_SCHEMA
    client.send(
        {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"confirm": False}},
        }
    )
    structured = _structured(client.reply_to(call_id))
    assert structured["action"] == "accept"
    assert structured["content"] == {"confirm": False}


def test_legacy_form_declared_explicitly_is_asked(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {"elicitation": {"form": {}, "url": {}}})
    call_id, question = _legacy_elicitation(client)
    assert question["params"]["mode"] == "form"
    client.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
    assert _structured(client.reply_to(call_id))["action"] == "decline"


@pytest.mark.parametrize(
    ("version", "capabilities", "initialized"),
    [
        pytest.param("2025-11-25", {}, True, id="no-elicitation-capability"),
        pytest.param("2025-11-25", {"elicitation": {"url": {}}}, True, id="url-only-elicitation"),
        pytest.param("2025-11-25", {"elicitation": {}}, False, id="before-initialized"),
        pytest.param("2025-03-26", {"elicitation": {}}, True, id="session-2025-03-26"),
        pytest.param("2024-11-05", {"elicitation": {}}, True, id="session-2024-11-05"),
    ],
)
def test_legacy_unavailable_sends_no_request(
    connect: Any, recorder: Recorder, version: str, capabilities: dict[str, Any], initialized: bool
) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize(version, capabilities, initialized=initialized)
    call_id = client.request("tools/call", {"name": "ask_confirm", "arguments": {"label": "x"}})
    reply = client.recv()  # the very next message is the answer: no elicitation/create came first
    assert reply.get("id") == call_id and "method" not in reply, reply
    result = reply["result"]
    assert result["isError"] is False
    assert result["content"][0]["text"] == "received unavailable"
    if "structuredContent" in result:
        assert result["structuredContent"]["action"] == "unavailable"
    assert [c["action"] for c in recorder.snapshot()] == ["unavailable"]


def test_legacy_no_elicitation_flag_is_unavailable(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder, elicitation=False)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id = client.request("tools/call", {"name": "ask_confirm", "arguments": {}})
    reply = client.recv()
    assert reply.get("id") == call_id and "method" not in reply, reply
    assert reply["result"]["structuredContent"]["action"] == "unavailable"


def test_legacy_serial_server_does_not_ask(connect: Any, recorder: Recorder) -> None:
    """Without concurrency the answer could never be read while the call waits: no question."""
    client = connect(Server(make_spec(recorder), concurrent=False))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id = client.request("tools/call", {"name": "ask_confirm", "arguments": {}})
    reply = client.recv()
    assert reply.get("id") == call_id and "method" not in reply, reply
    assert reply["result"]["structuredContent"]["action"] == "unavailable"


def test_legacy_ping_answered_while_a_call_waits(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id, question = _legacy_elicitation(client)
    assert client.call("ping")["result"] == {}
    client.send(
        {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"confirm": True}}}
    )
    assert _structured(client.reply_to(call_id))["action"] == "accept"


def test_legacy_cancelled_call_gets_no_response(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id, question = _legacy_elicitation(client)
    client.notify("notifications/cancelled", {"requestId": call_id, "reason": "user gave up"})
    assert client.call("ping")["result"] == {}
    assert client.quiet(0.5), "the cancelled tools/call must get no response"
    # A late answer to the abandoned question changes nothing either.
    client.send(
        {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"confirm": True}}}
    )
    assert client.quiet(0.3)
    assert all(c["action"] != "accept" for c in recorder.snapshot())
    # The server keeps serving, questions included.
    next_id, next_question = _legacy_elicitation(client, {"label": "again"})
    client.send({"jsonrpc": "2.0", "id": next_question["id"], "result": {"action": "decline"}})
    assert _structured(client.reply_to(next_id))["action"] == "decline"
    assert next_question["id"] != question["id"]


def test_legacy_eof_while_a_question_waits(recorder: Recorder) -> None:
    """stdin EOF ends the wait at once; the in-flight call is finished and answered, then serve returns."""
    client = PipeClient(Server(make_spec(recorder)))
    try:
        client.initialize("2025-11-25", {"elicitation": {}})
        call_id, _question = _legacy_elicitation(client)
        rest = client.eof()
    finally:
        client.close()
    assert [m.get("id") for m in rest] == [call_id]
    assert rest[0]["result"]["structuredContent"]["action"] not in ("accept", "timeout")


def test_legacy_two_questions_in_one_call(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_id = client.request("tools/call", {"name": "ask_twice", "arguments": {}})
    first = client.recv()
    assert first["method"] == "elicitation/create"
    assert first["params"]["requestedSchema"] == CONFIRM_SCHEMA
    client.send(
        {"jsonrpc": "2.0", "id": first["id"], "result": {"action": "accept", "content": {"confirm": True}}}
    )
    second = client.recv()
    assert second["method"] == "elicitation/create"
    assert second["params"]["requestedSchema"] == NAME_SCHEMA
    assert second["id"] != first["id"]
    assert recorder.snapshot() == []
    client.send(
        {"jsonrpc": "2.0", "id": second["id"], "result": {"action": "accept", "content": {"name": "n"}}}
    )
    structured = _structured(client.reply_to(call_id))
    assert structured["first"] == {"action": "accept", "content": {"confirm": True}}
    assert structured["second"] == {"action": "accept", "content": {"name": "n"}}


def _answer_every_question(client: PipeClient, call_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Accept each `elicitation/create` as it comes; return the replies to `call_ids`."""
    replies: dict[int, dict[str, Any]] = {}
    while len(replies) < len(call_ids):
        message = client.recv(timeout=10)
        if message.get("method") == "elicitation/create":
            answer = {"action": "accept", "content": {"confirm": True}}
            client.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})
        else:
            replies[message["id"]] = message
    assert sorted(replies) == sorted(call_ids)
    return replies


def test_legacy_answers_get_through_while_operations_fill_the_input_bound(
    connect: Any, recorder: Recorder
) -> None:
    """protocol.bounds: a call waiting on the human holds neither the input bound nor a run slot.

    Two operations may be pending and one may run. Six pipelined calls all ask; if waiting
    calls counted, the reader would stop with the answers stuck behind the queued calls and
    every dialog would time out instead.
    """
    spec = make_spec(recorder, elicitation_timeout=5.0)
    client = connect(Server(spec, workers=1, max_pending=2, max_open_questions=8))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_ids = [
        client.request("tools/call", {"name": "ask_confirm", "arguments": {"label": str(n)}})
        for n in range(6)
    ]
    replies = _answer_every_question(client, call_ids)
    assert [_structured(replies[i])["action"] for i in call_ids] == ["accept"] * 6
    assert client.call("ping")["result"] == {}


def test_legacy_questions_beyond_the_cap_fall_back_at_once(connect: Any, recorder: Recorder) -> None:
    """protocol.bounds: past MAX_OPEN_QUESTIONS a call is not asked; it gets `unavailable` (token flow)."""
    client = connect(Server(make_spec(recorder), max_open_questions=2))
    client.initialize("2025-11-25", {"elicitation": {}})
    call_ids = [client.request("tools/call", {"name": "ask_confirm", "arguments": {}}) for _ in range(3)]
    questions: list[dict[str, Any]] = []
    replies: dict[int, dict[str, Any]] = {}
    while len(questions) + len(replies) < 3:
        message = client.recv()
        if message.get("method") == "elicitation/create":
            questions.append(message)
        else:
            replies[message["id"]] = message
    assert len(questions) == 2
    [(_, fallback)] = replies.items()
    assert _structured(fallback)["action"] == "unavailable"
    for question in questions:
        client.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
    rest = [client.recv() for _ in questions]
    assert sorted(m["id"] for m in rest) == sorted(set(call_ids) - set(replies))
    assert [_structured(m)["action"] for m in rest] == ["decline", "decline"]


# --- 2026-07-28: input_required and requestState -------------------------------------------


def _input_required(reply: dict[str, Any], key: str = "confirm") -> str:
    result = reply["result"]
    assert result["resultType"] == "input_required", result
    assert "content" not in result and "isError" not in result
    assert set(result["inputRequests"]) == {key}
    request = result["inputRequests"][key]
    assert request["method"] == "elicitation/create"
    assert "id" not in request and "jsonrpc" not in request
    assert request["params"]["mode"] == "form"
    state = result["requestState"]
    assert isinstance(state, str) and state
    assert "ttlMs" not in result and "cacheScope" not in result
    assert result["_meta"][META_SERVER_INFO]["name"] == "elicitation-test"
    return state


def test_modern_round_trip_accept(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    first = client.modern_call("ask_confirm", {"label": "a"})
    state = _input_required(first)
    params = first["result"]["inputRequests"]["confirm"]["params"]
    assert params["message"] == CONFIRM_MESSAGE
    assert params["requestedSchema"] == CONFIRM_SCHEMA
    assert recorder.snapshot() == []  # the first round has no side effects

    retry = client.modern_call(
        "ask_confirm",
        {"label": "a"},
        inputResponses={"confirm": {"action": "accept", "content": {"confirm": True}}},
        requestState=state,
    )
    assert retry["id"] != first["id"]
    assert retry["result"]["resultType"] == "complete"
    structured = _structured(retry)
    assert structured == {
        "tool": "ask_confirm",
        "arguments": {"label": "a"},
        "action": "accept",
        "content": {"confirm": True},
    }
    assert recorder.snapshot() == [structured]


def test_modern_round_trip_decline(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    state = _input_required(client.modern_call("ask_confirm", {}))
    retry = client.modern_call(
        "ask_confirm", {}, inputResponses={"confirm": {"action": "decline"}}, requestState=state
    )
    assert retry["result"]["resultType"] == "complete"
    assert _structured(retry)["action"] == "decline"


def test_modern_retry_without_the_answer_asks_again(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    state = _input_required(client.modern_call("ask_confirm", {}))
    again = client.modern_call("ask_confirm", {}, inputResponses={}, requestState=state)
    new_state = _input_required(again)
    assert recorder.snapshot() == []
    done = client.modern_call(
        "ask_confirm",
        {},
        inputResponses={"confirm": {"action": "accept", "content": {}}},
        requestState=new_state,
    )
    assert _structured(done)["action"] == "accept"


def test_modern_extra_response_keys_are_ignored(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    state = _input_required(client.modern_call("ask_confirm", {}))
    responses = {
        "confirm": {"action": "accept", "content": {"confirm": True}},
        "unasked": {"action": "decline"},
    }
    done = client.modern_call("ask_confirm", {}, inputResponses=responses, requestState=state)
    assert _structured(done)["action"] == "accept"


def test_modern_answer_without_state_is_not_trusted(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    reply = client.modern_call(
        "ask_confirm", {}, inputResponses={"confirm": {"action": "accept", "content": {"confirm": True}}}
    )
    if "error" not in reply:
        _input_required(reply)
    assert recorder.snapshot() == []


def test_modern_two_rounds_carry_the_first_answer(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    state1 = _input_required(client.modern_call("ask_twice", {}))
    second = client.modern_call(
        "ask_twice",
        {},
        inputResponses={"confirm": {"action": "accept", "content": {"confirm": True}}},
        requestState=state1,
    )
    state2 = _input_required(second, "name")
    assert state2 != state1
    assert recorder.snapshot() == []
    done = client.modern_call(
        "ask_twice",
        {},
        inputResponses={"name": {"action": "accept", "content": {"name": "n"}}},
        requestState=state2,
    )
    structured = _structured(done)
    assert structured["first"] == {"action": "accept", "content": {"confirm": True}}
    assert structured["second"] == {"action": "accept", "content": {"name": "n"}}
    assert len(recorder.snapshot()) == 1


def _flip(state: str, index: int) -> str:
    char = state[index]
    assert char != "."
    return state[:index] + ("A" if char != "A" else "B") + state[index + 1 :]


@pytest.mark.parametrize("where", ["body", "tag"])
def test_modern_tampered_state_is_invalid_params(connect: Any, recorder: Recorder, where: str) -> None:
    client = connect(Server(make_spec(recorder)))
    state = _input_required(client.modern_call("ask_confirm", {}))
    dot = state.index(".")
    # A middle character: every bit of it is significant in base64url.
    tampered = _flip(state, dot // 2 if where == "body" else dot + (len(state) - dot) // 2)
    assert tampered != state
    reply = client.modern_call(
        "ask_confirm",
        {},
        inputResponses={"confirm": {"action": "accept", "content": {"confirm": True}}},
        requestState=tampered,
    )
    error_of(reply, -32602)
    assert recorder.snapshot() == []


@pytest.mark.parametrize("state", ["", "garbage", "a.b.c", "!!!.???"])
def test_modern_garbage_state_is_invalid_params(connect: Any, recorder: Recorder, state: str) -> None:
    client = connect(Server(make_spec(recorder)))
    reply = client.modern_call(
        "ask_confirm", {}, inputResponses={"confirm": {"action": "accept", "content": {}}}, requestState=state
    )
    error_of(reply, -32602)
    assert recorder.snapshot() == []


def test_modern_state_reused_with_other_arguments(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    state = _input_required(client.modern_call("ask_confirm", {"label": "approved"}))
    reply = client.modern_call(
        "ask_confirm",
        {"label": "something else"},
        inputResponses={"confirm": {"action": "accept", "content": {"confirm": True}}},
        requestState=state,
    )
    error_of(reply, -32602)
    assert recorder.snapshot() == []


def test_modern_state_reused_for_another_tool(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder)))
    state = _input_required(client.modern_call("ask_confirm", {}))
    reply = client.modern_call(
        "ask_other",
        {},
        inputResponses={"confirm": {"action": "accept", "content": {"confirm": True}}},
        requestState=state,
    )
    error_of(reply, -32602)
    assert recorder.snapshot() == []


def test_modern_state_from_another_server_instance(connect: Any, recorder: Recorder) -> None:
    first_server = connect(Server(make_spec(recorder)))
    state = _input_required(first_server.modern_call("ask_confirm", {}))
    restarted = connect(Server(make_spec(recorder)))
    reply = restarted.modern_call(
        "ask_confirm",
        {},
        inputResponses={"confirm": {"action": "accept", "content": {"confirm": True}}},
        requestState=state,
    )
    error_of(reply, -32602)
    assert recorder.snapshot() == []


def test_modern_expired_state(connect: Any, recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000_000.0]
    monkeypatch.setattr(
        protocol.loop, "StateSealer", lambda binding: StateSealer(binding, clock=lambda: now[0])
    )
    client = connect(Server(make_spec(recorder)))
    answer = {"confirm": {"action": "accept", "content": {"confirm": True}}}

    fresh = _input_required(client.modern_call("ask_confirm", {}))
    now[0] += STATE_TTL_SECONDS - 5
    assert (
        _structured(client.modern_call("ask_confirm", {}, inputResponses=answer, requestState=fresh))[
            "action"
        ]
        == "accept"
    )

    stale = _input_required(client.modern_call("ask_confirm", {}))
    now[0] += STATE_TTL_SECONDS + 5
    error_of(client.modern_call("ask_confirm", {}, inputResponses=answer, requestState=stale), -32602)
    assert len(recorder.snapshot()) == 1


def test_modern_concurrent_retries_with_one_state_run_once(connect: Any, recorder: Recorder) -> None:
    """SPEC §4.3: of eight retries with one requestState in flight at once, exactly one runs.

    The handler holds every retry that reaches it until the others have been answered (or
    2 s pass), so a check-then-spend race lets several through deterministically.
    """
    client = connect(Server(make_spec(recorder)))
    state = _input_required(client.modern_call("ask_confirm", {"label": "once"}))
    recorder.release.clear()
    params = {
        "name": "ask_confirm",
        "arguments": {"label": "once"},
        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}},
        "requestState": state,
        "_meta": {
            META_VERSION: MODERN,
            META_CAPABILITIES: {"elicitation": {}},
        },
    }
    ids = [client.request("tools/call", params) for _ in range(8)]
    replies: dict[int, dict[str, Any]] = {}
    deadline = time.monotonic() + 2.0
    while len(replies) < 7 and (left := deadline - time.monotonic()) > 0:
        try:
            reply = client.recv(timeout=left)
        except AssertionError:
            break
        replies[reply["id"]] = reply
    recorder.release.set()
    while len(replies) < 8:
        reply = client.recv()
        replies[reply["id"]] = reply
    assert sorted(replies) == sorted(ids)
    ran = [r for r in replies.values() if "result" in r]
    refused = [r for r in replies.values() if "error" in r]
    assert len(ran) == 1, f"{len(ran)} of 8 retries ran"
    assert _structured(ran[0])["action"] == "accept"
    assert [r["error"]["code"] for r in refused] == [-32602] * 7
    assert all("already used" in r["error"]["message"] for r in refused)
    assert len(recorder.snapshot()) == 1


def test_modern_malformed_retry_does_not_spend_the_state(connect: Any, recorder: Recorder) -> None:
    """engram's choice: a retry refused for a malformed answer leaves the state usable."""
    client = connect(Server(make_spec(recorder)))
    state = _input_required(client.modern_call("ask_confirm", {}))
    bad = client.modern_call("ask_confirm", {}, inputResponses={"confirm": "yes"}, requestState=state)
    error_of(bad, -32602)
    good = client.modern_call(
        "ask_confirm", {}, inputResponses={"confirm": {"action": "accept", "content": {}}}, requestState=state
    )
    assert _structured(good)["action"] == "accept"
    again = client.modern_call(
        "ask_confirm", {}, inputResponses={"confirm": {"action": "accept", "content": {}}}, requestState=state
    )
    assert "already used" in error_of(again, -32602)["message"]
    assert len(recorder.snapshot()) == 1


@pytest.mark.parametrize(
    "responses",
    [
        pytest.param({"confirm": {"action": "maybe"}}, id="unknown-action"),
        pytest.param({"confirm": "yes"}, id="not-an-object"),
        pytest.param({"confirm": {"action": "accept", "content": "yes"}}, id="content-not-object"),
        pytest.param(["confirm"], id="responses-not-a-map"),
    ],
)
def test_modern_malformed_input_responses(connect: Any, recorder: Recorder, responses: Any) -> None:
    client = connect(Server(make_spec(recorder)))
    state = _input_required(client.modern_call("ask_confirm", {}))
    reply = client.modern_call("ask_confirm", {}, inputResponses=responses, requestState=state)
    error_of(reply, -32602)
    assert recorder.snapshot() == []


@pytest.mark.parametrize(
    "capabilities",
    [
        pytest.param({}, id="no-elicitation"),
        pytest.param({"elicitation": {"url": {}}}, id="url-only"),
        pytest.param({"sampling": {}}, id="other-capability"),
    ],
)
def test_modern_without_elicitation_is_unavailable(
    connect: Any, recorder: Recorder, capabilities: dict[str, Any]
) -> None:
    client = connect(Server(make_spec(recorder)))
    reply = client.modern_call("ask_confirm", {"label": "x"}, capabilities=capabilities)
    assert reply["result"]["resultType"] == "complete"
    assert "inputRequests" not in reply["result"] and "requestState" not in reply["result"]
    assert _structured(reply)["action"] == "unavailable"
    assert [c["action"] for c in recorder.snapshot()] == ["unavailable"]


def test_modern_no_elicitation_flag_is_unavailable(connect: Any, recorder: Recorder) -> None:
    client = connect(Server(make_spec(recorder, elicitation=False)))
    reply = client.modern_call("ask_confirm", {})
    assert reply["result"]["resultType"] == "complete"
    assert _structured(reply)["action"] == "unavailable"


def test_modern_is_stateless_across_eras(connect: Any, recorder: Recorder) -> None:
    """A legacy session on the same process does not change what a modern request may ask."""
    client = connect(Server(make_spec(recorder)))
    client.initialize("2025-11-25", {})
    state = _input_required(client.modern_call("ask_confirm", {}))
    done = client.modern_call(
        "ask_confirm", {}, inputResponses={"confirm": {"action": "cancel"}}, requestState=state
    )
    assert _structured(done)["action"] == "cancel"


# --- units: drive_live, drive_rounds, StateSealer, helpers --------------------------------------


def _asking(log: list[ElicitAnswer]) -> Generator[Elicit, ElicitAnswer, ToolResult]:
    first = yield Elicit("confirm", "first?", CONFIRM_SCHEMA)
    second = yield Elicit("name", "second?", NAME_SCHEMA)
    log.extend([first, second])
    return ToolResult(text=f"{first.action}/{second.action}")


def test_drive_live_answers_every_question_in_order() -> None:
    log: list[ElicitAnswer] = []
    asked: list[str] = []

    def ask(question: Elicit) -> ElicitAnswer:
        asked.append(question.key)
        return ElicitAnswer("accept", {"k": question.key})

    result = drive_live(_asking(log), ask)
    assert result.text == "accept/accept"
    assert asked == ["confirm", "name"]
    assert log == [ElicitAnswer("accept", {"k": "confirm"}), ElicitAnswer("accept", {"k": "name"})]


def test_drive_live_and_rounds_pass_plain_results_through() -> None:
    plain = ToolResult(text="no questions")
    assert drive_live(plain, lambda q: pytest.fail("must not ask")) is plain
    assert drive_rounds(plain, {}, can_ask=True) is plain


def test_drive_rounds_stops_at_the_first_open_question_without_side_effects() -> None:
    log: list[ElicitAnswer] = []
    outcome = drive_rounds(_asking(log), {}, can_ask=True)
    assert isinstance(outcome, NeedInput)
    assert outcome.question.key == "confirm"
    assert log == []

    outcome = drive_rounds(_asking(log), {"confirm": ElicitAnswer("accept", {"confirm": True})}, can_ask=True)
    assert isinstance(outcome, NeedInput)
    assert outcome.question.key == "name"
    assert log == []

    answers = {"confirm": ElicitAnswer("accept", {"confirm": True}), "name": ElicitAnswer("decline")}
    result = drive_rounds(_asking(log), answers, can_ask=True)
    assert isinstance(result, ToolResult) and result.text == "accept/decline"
    assert log == [answers["confirm"], answers["name"]]


def test_drive_rounds_without_asking_answers_unavailable() -> None:
    log: list[ElicitAnswer] = []
    result = drive_rounds(_asking(log), {"confirm": ElicitAnswer("accept")}, can_ask=False)
    assert isinstance(result, ToolResult) and result.text == "accept/unavailable"
    assert log == [ElicitAnswer("accept"), ElicitAnswer("unavailable")]


def test_state_sealer_round_trip() -> None:
    sealer = StateSealer("ws")
    answers = {"confirm": ElicitAnswer("accept", {"confirm": True})}
    state = sealer.seal("tool", {"a": 1, "b": [1, 2]}, answers, "name")
    # Argument key order does not matter; the digest is over sorted JSON.
    opened, asked = sealer.open(state, "tool", {"b": [1, 2], "a": 1})
    assert opened == answers
    assert asked == "name"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("tool", {"a": 2}), ("other", {"a": 1}), ("tool", {}), ("tool", {"a": 1, "extra": True})],
)
def test_state_sealer_binds_tool_and_arguments(tool: str, arguments: dict[str, Any]) -> None:
    sealer = StateSealer("ws")
    state = sealer.seal("tool", {"a": 1}, {}, "confirm")
    with pytest.raises(InvalidParams):
        sealer.open(state, tool, arguments)


@pytest.mark.parametrize("state", [None, 42, "", "x", "a.b.c", "abc.def", "***.***", "x" * 70_000])
def test_state_sealer_rejects_garbage(state: Any) -> None:
    with pytest.raises(InvalidParams):
        StateSealer("ws").open(state, "tool", {})


def test_state_sealer_rejects_another_key_and_tampering() -> None:
    sealer = StateSealer("ws")
    state = sealer.seal("tool", {}, {}, "confirm")
    with pytest.raises(InvalidParams):
        StateSealer("ws").open(state, "tool", {})
    dot = state.index(".")
    for index in (dot // 2, dot + (len(state) - dot) // 2):
        with pytest.raises(InvalidParams):
            sealer.open(_flip(state, index), "tool", {})
    body, tag = state.split(".")
    other = sealer.seal("tool", {}, {"confirm": ElicitAnswer("accept")}, "name")
    with pytest.raises(InvalidParams):
        sealer.open(f"{other.split('.')[0]}.{tag}", "tool", {})


def test_state_sealer_expires() -> None:
    now = [5_000.0]
    sealer = StateSealer("ws", clock=lambda: now[0])
    state = sealer.seal("tool", {}, {}, "confirm")
    now[0] += STATE_TTL_SECONDS
    assert sealer.open(state, "tool", {}) == ({}, "confirm")
    now[0] += 2
    with pytest.raises(InvalidParams):
        sealer.open(state, "tool", {})


def test_state_sealer_tolerates_no_expiry_before_sealing() -> None:
    now = [5_000.0]
    sealer = StateSealer("ws", clock=lambda: now[0])
    state = sealer.seal("tool", {}, {}, "confirm")
    now[0] -= 100  # a clock step backwards does not invalidate a fresh state
    assert sealer.open(state, "tool", {})[1] == "confirm"


def test_form_capable() -> None:
    assert form_capable({"elicitation": {}})
    assert form_capable({"elicitation": {"form": {}}})
    assert form_capable({"elicitation": {"form": {}, "url": {}}})
    assert not form_capable({"elicitation": {"url": {}}})
    assert not form_capable({})
    assert not form_capable({"elicitation": True})
    assert not form_capable({"elicitation": None})


def test_elicitation_params_mode_only_when_asked() -> None:
    question = Elicit("confirm", CONFIRM_MESSAGE, CONFIRM_SCHEMA)
    assert elicitation_params(question, with_mode=True) == {
        "mode": "form",
        "message": CONFIRM_MESSAGE,
        "requestedSchema": CONFIRM_SCHEMA,
    }
    assert elicitation_params(question, with_mode=False) == {
        "message": CONFIRM_MESSAGE,
        "requestedSchema": CONFIRM_SCHEMA,
    }


def test_parse_answer() -> None:
    assert parse_answer({"action": "accept", "content": {"confirm": True}}) == ElicitAnswer(
        "accept", {"confirm": True}
    )
    assert parse_answer({"action": "decline"}) == ElicitAnswer("decline")
    assert parse_answer({"action": "cancel"}) == ElicitAnswer("cancel")
    for bad in (
        None,
        "accept",
        [],
        {},
        {"action": "unavailable"},
        {"action": "timeout"},
        {"action": "accept", "content": 1},
    ):
        with pytest.raises(InvalidParams):
            parse_answer(bad)
