"""Questions to the human, in both eras, from one handler shape (SPEC §4.3, PROTOCOL §11–12).

A tool handler may be a generator that yields `Elicit` questions and finally returns its
`ToolResult`. The rule that makes this safe: no side effects before the last `yield`.

* Legacy: `drive_live` answers each question by sending `elicitation/create` to the client
  and waiting (the server supplies `ask`).
* 2026-07-28: `drive_rounds` re-runs the handler from the start with the answers gathered
  so far; at the first unanswered question it stops and the caller answers `input_required`
  with a `requestState` sealed by `StateSealer` (HMAC, fresh key per process, expiring,
  bound to tool, arguments and the application's binding such as the workspace).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from protocol.bounds import MAX_PARAMS_DEPTH, depth_exceeds
from protocol.errors import InvalidParams, RpcError
from protocol.spec import Elicit, ElicitAnswer, ToolResult, ToolReturn

STATE_TTL_SECONDS: Final = 600
_WIRE_ACTIONS: Final = ("accept", "decline", "cancel")


@dataclass(frozen=True, slots=True)
class NeedInput:
    """The handler stopped at a question the client has not answered yet."""

    question: Elicit


def drive_live(outcome: ToolReturn, ask: Callable[[Elicit], ElicitAnswer]) -> ToolResult:
    """Run a handler to completion, answering each question through `ask`."""
    if isinstance(outcome, ToolResult):
        return outcome
    try:
        question = next(outcome)
        while True:
            question = outcome.send(ask(question))
    except StopIteration as stop:
        result: ToolResult = stop.value
        return result


def drive_rounds(
    outcome: ToolReturn, answers: Mapping[str, ElicitAnswer], can_ask: bool
) -> ToolResult | NeedInput:
    """Replay a handler with known answers; stop at the first question still open."""
    if isinstance(outcome, ToolResult):
        return outcome
    gen: Generator[Elicit, ElicitAnswer, ToolResult] = outcome
    try:
        question = next(gen)
        while True:
            if question.key in answers:
                question = gen.send(answers[question.key])
            elif can_ask:
                gen.close()
                return NeedInput(question)
            else:
                question = gen.send(ElicitAnswer("unavailable"))
    except StopIteration as stop:
        result: ToolResult = stop.value
        return result


def elicitation_params(question: Elicit, *, with_mode: bool) -> dict[str, Any]:
    """`elicitation/create` params; before 2025-11-25 (`with_mode` false) there is no `mode`
    and only boolean properties may carry a `default`."""
    schema = question.schema
    if not with_mode:
        properties = {
            name: (
                prop if prop.get("type") == "boolean" else {k: v for k, v in prop.items() if k != "default"}
            )
            for name, prop in schema.get("properties", {}).items()
        }
        schema = {**schema, "properties": properties}
    params: dict[str, Any] = {"message": question.message, "requestedSchema": schema}
    return {"mode": "form", **params} if with_mode else params


def parse_answer(raw: Any) -> ElicitAnswer:
    """A client's `ElicitResult`, checked; anything malformed is -32602."""
    if not isinstance(raw, dict) or raw.get("action") not in _WIRE_ACTIONS:
        raise InvalidParams(
            "each inputResponses entry must be an ElicitResult with action accept|decline|cancel"
        )
    content = raw.get("content")
    if content is not None and not isinstance(content, dict):
        raise InvalidParams("inputResponses content must be an object")
    return ElicitAnswer(raw["action"], content)


def form_capable(capabilities: Mapping[str, Any]) -> bool:
    """`elicitation: {}` means form only; otherwise `form` must be declared."""
    declared = capabilities.get("elicitation")
    return isinstance(declared, dict) and (not declared or "form" in declared)


class StateSealer:
    """Seals and opens `requestState`: integrity-protected, expiring, bound to one call."""

    def __init__(self, binding: str, clock: Callable[[], float] = time.time) -> None:
        self._key = secrets.token_bytes(32)
        self._binding = binding
        self._clock = clock
        self._spent: dict[str, float] = {}
        """Digests of states a retry has claimed, until they would have expired anyway."""
        self._spent_lock = threading.Lock()

    @staticmethod
    def _fingerprint(state: str) -> str:
        return hashlib.sha256(state.encode()).hexdigest()

    def claim(self, state: str) -> bool:
        """Spend `state` now; False when it was already spent (SPEC §4.3).

        Test and set happen under one lock, before the retry runs: of any number of
        concurrent retries carrying one state, exactly one gets True. A spent state is
        remembered until it would have expired anyway.
        """
        now = self._clock()
        fingerprint = self._fingerprint(state)
        with self._spent_lock:
            if fingerprint in self._spent:
                return False
            self._spent = {k: v for k, v in self._spent.items() if v > now}
            self._spent[fingerprint] = now + STATE_TTL_SECONDS
            return True

    @staticmethod
    def _digest(tool: str, arguments: Any) -> str:
        return hashlib.sha256(orjson.dumps([tool, arguments], option=orjson.OPT_SORT_KEYS)).hexdigest()

    def seal(self, tool: str, arguments: Any, answers: Mapping[str, ElicitAnswer], asked: str) -> str:
        payload = {
            "b": self._binding,
            "d": self._digest(tool, arguments),
            "x": int(self._clock()) + STATE_TTL_SECONDS,
            "q": asked,
            "a": {k: {"action": v.action, "content": v.content} for k, v in answers.items()},
            "n": secrets.token_urlsafe(12),  # every state is distinct, so spending one spends no other
        }
        body = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
        tag = hmac.new(self._key, body, hashlib.sha256).digest()
        return f"{_b64(body)}.{_b64(tag)}"

    def open(self, state: Any, tool: str, arguments: Any) -> tuple[dict[str, ElicitAnswer], str]:
        """Return (answers so far, key asked last); any fault is -32602 and nothing happens."""
        invalid = InvalidParams("Invalid or expired requestState: start the call again without it")
        if not isinstance(state, str) or state.count(".") != 1 or len(state) > 65536:
            raise invalid
        body_text, tag_text = state.split(".")
        try:
            body, tag = _unb64(body_text), _unb64(tag_text)
        except ValueError:
            raise invalid from None
        if not hmac.compare_digest(hmac.new(self._key, body, hashlib.sha256).digest(), tag):
            raise invalid
        payload = orjson.loads(body)
        if (
            payload["b"] != self._binding
            or payload["d"] != self._digest(tool, arguments)
            or payload["x"] < self._clock()
        ):
            raise invalid
        answers = {k: ElicitAnswer(v["action"], v["content"]) for k, v in payload["a"].items()}
        return answers, payload["q"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise ValueError("not base64url") from exc


def answer_of(reply: dict[str, Any] | None) -> ElicitAnswer:
    """What the client's reply to `elicitation/create` says: `cancel` for none (the session
    ended), `error` for an error or a reply too deeply nested to read, else the parsed answer."""
    if reply is None:
        return ElicitAnswer("cancel")
    if "error" in reply or depth_exceeds(reply, MAX_PARAMS_DEPTH):
        return ElicitAnswer("error")
    try:
        return parse_answer(reply.get("result") if "result" in reply else reply)
    except RpcError:
        return ElicitAnswer("error")
