"""The MCP method families (tools, resources, prompts) and per-version result shapes.

Results are built in their newest shape, then down-levelled for older legacy sessions
(PROTOCOL §15) or decorated for 2026-07-28 (`resultType`, serverInfo, caching fields).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Final

from protocol.elicitation import (
    NeedInput,
    StateSealer,
    drive_live,
    drive_rounds,
    elicitation_params,
    form_capable,
    parse_answer,
)
from protocol.eras import LEGACY_VERSIONS, META_SERVER_INFO, MODERN_VERSIONS, at_least
from protocol.errors import InvalidParams, ResourceNotFound
from protocol.spec import CallContext, Elicit, ElicitAnswer, Identity, ServerSpec, Tool, ToolResult
from protocol.validation import Problems, compile_validator

log = logging.getLogger("engram.protocol")

MODERN: Final = MODERN_VERSIONS[0]
LIST_TTL_MS: Final = 300_000
DISCOVER_TTL_MS: Final = 3_600_000

Ask = Callable[[Elicit], ElicitAnswer]


def has_feature(version: str, since: str) -> bool:
    """Whether a session at `version` knows a feature introduced in legacy version `since`."""
    return version not in LEGACY_VERSIONS or at_least(version, since)


def capabilities() -> dict[str, Any]:
    return {"tools": {}, "resources": {}, "prompts": {}}


def discover_result(spec: Identity) -> dict[str, Any]:
    return {
        "supportedVersions": list(MODERN_VERSIONS),
        "capabilities": capabilities(),
        "instructions": spec.instructions,
        "ttlMs": DISCOVER_TTL_MS,
        "cacheScope": "public",
    }


def decorate_modern(spec: Identity, result: dict[str, Any]) -> dict[str, Any]:
    """Every modern result carries `resultType` and the serverInfo `_meta`."""
    result.setdefault("resultType", "complete")
    meta = dict(result.get("_meta") or {})
    meta[META_SERVER_INFO] = {"name": spec.name, "version": spec.version}
    result["_meta"] = meta
    return result


def _cacheable(result: dict[str, Any], version: str, ttl: int, scope: str) -> dict[str, Any]:
    if version not in LEGACY_VERSIONS:
        result["ttlMs"] = ttl
        result["cacheScope"] = scope
    return result


def _no_cursor(params: dict[str, Any]) -> None:
    if params.get("cursor") is not None:
        raise InvalidParams("Invalid cursor: this server returns every item on one page; omit cursor")


def _strip_titles(entry: dict[str, Any], version: str) -> dict[str, Any]:
    if has_feature(version, "2025-06-18"):
        return entry
    return {k: v for k, v in entry.items() if k != "title"}


class Methods:
    """Handlers for the operational methods; the server decides era and session first."""

    def __init__(self, spec: ServerSpec, sealer: StateSealer) -> None:
        self.spec = spec
        self.tools: dict[str, Tool] = {t.name: t for t in spec.tools}
        self._sealer = sealer
        self._validators: dict[str, Problems] = {}
        self._validators_lock = threading.Lock()
        self._operations: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]] = {
            "tools/list": self.list_tools,
            "resources/list": self.list_resources,
            "resources/templates/list": self.list_templates,
            "resources/read": self.read_resource,
            "prompts/list": self.list_prompts,
            "prompts/get": self.get_prompt,
        }
        """protocol.routes.OPERATIONS, each to its handler: built once per server."""

    def operation(self, method: str, params: dict[str, Any], version: str) -> dict[str, Any]:
        """A listing or read (protocol.routes.Route.OPERATION), alike in both eras."""
        return self._operations[method](params, version)

    # --- tools -----------------------------------------------------------------------------
    def list_tools(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        _no_cursor(params)
        tools = [self._tool_shape(t, version) for t in self.spec.tools]
        return _cacheable({"tools": tools}, version, LIST_TTL_MS, "public")

    @staticmethod
    def _tool_shape(tool: Tool, version: str) -> dict[str, Any]:
        entry = tool.listing()
        if not has_feature(version, "2025-03-26"):
            entry.pop("annotations", None)
        if not has_feature(version, "2025-06-18"):
            if "title" in entry and "annotations" in entry:  # 2025-03-26: the title's old place
                entry["annotations"] = {"title": entry["title"], **entry["annotations"]}
            for key in ("title", "outputSchema", "_meta"):
                entry.pop(key, None)
        return entry

    def _problems(self, tool: Tool, arguments: dict[str, Any]) -> list[str]:
        with self._validators_lock:
            validator = self._validators.get(tool.name)
            if validator is None:
                validator = self._validators[tool.name] = compile_validator(tool.input_schema)
        return validator(arguments)

    def _lookup(self, params: dict[str, Any]) -> tuple[Tool, dict[str, Any]]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call needs params.name, the tool's name as a string")
        arguments = params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParams("tools/call params.arguments must be an object")
        tool = self.tools.get(name)
        if tool is None:
            raise InvalidParams(self.spec.unknown_tool_hint(name), data={"name": name})
        return tool, arguments

    def _start(self, tool: Tool, arguments: dict[str, Any], ctx: CallContext) -> ToolResult | Any:
        if problems := self._problems(tool, arguments):
            return self.spec.tool_error("VALIDATION", "Invalid arguments: " + "; ".join(problems))
        return tool.handler(arguments, ctx)

    def _guard(self, tool: Tool, run: Callable[[], ToolResult | NeedInput]) -> ToolResult | NeedInput:
        try:
            return run()
        except Exception as exc:  # the one boundary for handler faults: log, answer, keep serving
            log.exception("tool %s failed", tool.name)
            return self.spec.tool_error("INTERNAL", f"{tool.name} failed unexpectedly ({type(exc).__name__})")

    def call_tool_legacy(self, params: dict[str, Any], ctx: CallContext, ask: Ask) -> dict[str, Any]:
        tool, arguments = self._lookup(params)
        result = self._guard(tool, lambda: drive_live(self._start(tool, arguments, ctx), ask))
        assert isinstance(result, ToolResult)
        return self.tool_result_shape(result, ctx.version)

    def call_tool_bare(self, tool: Tool, params: dict[str, Any], ctx: CallContext, ask: Ask) -> str:
        """A legacy request whose method is a tool's name: the tool's human text as a string."""
        arguments = {k: v for k, v in params.items() if k != "_meta"}
        result = self._guard(tool, lambda: drive_live(self._start(tool, arguments, ctx), ask))
        assert isinstance(result, ToolResult)
        return result.text

    def call_tool_modern(self, params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        tool, arguments = self._lookup(params)
        answers: dict[str, ElicitAnswer] = {}
        state = params.get("requestState")
        if "requestState" in params:
            answers, asked = self._sealer.open(state, tool.name, arguments)
            assert isinstance(state, str)  # open() refused anything else
            responses = params.get("inputResponses")
            if responses is not None and not isinstance(responses, dict):
                raise InvalidParams("inputResponses must be an object keyed by the inputRequests keys")
            if responses and asked in responses:
                answers[asked] = parse_answer(responses[asked])
            # Spent before the handler runs, so a concurrent replay cannot run it twice; a retry
            # refused above for a malformed answer has not spent it.
            if not self._sealer.claim(state):
                raise InvalidParams("This requestState was already used: start the call again without it")
        can_ask = self.spec.elicitation and form_capable(ctx.client_capabilities)
        outcome = self._guard(tool, lambda: drive_rounds(self._start(tool, arguments, ctx), answers, can_ask))
        if isinstance(outcome, NeedInput):
            question = outcome.question
            request = {"method": "elicitation/create", "params": elicitation_params(question, with_mode=True)}
            return {
                "resultType": "input_required",
                "inputRequests": {question.key: request},
                "requestState": self._sealer.seal(tool.name, arguments, answers, question.key),
            }
        return self.tool_result_shape(outcome, ctx.version)

    @staticmethod
    def tool_result_shape(result: ToolResult, version: str) -> dict[str, Any]:
        shaped: dict[str, Any] = {"content": [{"type": "text", "text": result.text}]}
        if result.structured is not None and has_feature(version, "2025-06-18"):
            shaped["structuredContent"] = result.structured
        shaped["isError"] = result.is_error
        return shaped

    # --- resources -------------------------------------------------------------------------
    def list_resources(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        _no_cursor(params)
        resources = [_strip_titles(r, version) for r in self.spec.resources.listing()]
        return _cacheable({"resources": resources}, version, 0, "private")

    def list_templates(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        _no_cursor(params)
        templates = [_strip_titles(dict(t), version) for t in self.spec.resources.templates]
        return _cacheable({"resourceTemplates": templates}, version, LIST_TTL_MS, "public")

    def read_resource(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read needs params.uri as a string")
        contents = self.spec.resources.read(uri)
        if contents is None:
            message = f"Resource not found: {uri}"
            if version in LEGACY_VERSIONS:
                raise ResourceNotFound(message, data={"uri": uri})
            raise InvalidParams(message, data={"uri": uri})
        return _cacheable({"contents": contents}, version, 0, "private")

    # --- prompts ---------------------------------------------------------------------------
    def list_prompts(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        _no_cursor(params)
        prompts = []
        for prompt in self.spec.prompts:
            entry: dict[str, Any] = {
                "name": prompt.name,
                "title": prompt.title,
                "description": prompt.description,
            }
            entry["arguments"] = [
                {"name": a.name, "description": a.description, "required": a.required}
                for a in prompt.arguments
            ]
            prompts.append(_strip_titles(entry, version))
        return _cacheable({"prompts": prompts}, version, LIST_TTL_MS, "public")

    def get_prompt(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        name = params.get("name")
        prompt = next((p for p in self.spec.prompts if p.name == name), None)
        if prompt is None:
            known = ", ".join(p.name for p in self.spec.prompts)
            raise InvalidParams(f"Unknown prompt: {name!r} (available: {known})")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise InvalidParams("prompts/get arguments must be an object of strings")
        missing = [a.name for a in prompt.arguments if a.required and a.name not in arguments]
        if missing:
            raise InvalidParams(f"Missing prompt argument(s): {', '.join(missing)}")
        return {"description": prompt.description, "messages": prompt.render(arguments)}
