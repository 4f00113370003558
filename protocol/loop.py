"""The JSON-RPC loop: classify each message, serve both eras, answer every request once.

Requests are independent: lifecycle requests are answered inline, in order; the rest run on
a small worker pool so a slow tool call never blocks `ping`, `notifications/cancelled`, or
the client's answer to our own `elicitation/create`. The pool's input is bounded: the reader
stops reading while too many operations are pending, and an operation waiting for the human
never holds that bound or a run slot (see `protocol.bounds` for why this cannot deadlock).
This module is the only place that turns exceptions into wire errors.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import IO, Any, Final

import orjson

from protocol.bounds import (
    MAX_JSON_DEPTH,
    MAX_OPEN_QUESTIONS,
    MAX_PARAMS_DEPTH,
    MAX_PENDING,
    MAX_PENDING_BYTES,
    Admission,
    Ticket,
    depth_exceeds,
)
from protocol.elicitation import StateSealer, answer_of, elicitation_params, form_capable
from protocol.eras import (
    LEGACY_VERSIONS,
    META_CAPABILITIES,
    META_VERSION,
    MODERN_VERSIONS,
    Era,
    at_least,
    era_of,
    negotiate,
)
from protocol.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    RpcError,
    UnsupportedVersion,
)
from protocol.methods import Methods, capabilities, decorate_modern, discover_result
from protocol.routes import INLINE_METHODS, ROUTES, Route
from protocol.spec import CallContext, DeferredSpec, Elicit, ElicitAnswer, Identity, ServerSpec
from protocol.stdio import MAX_LINE_BYTES, OVERSIZED, ByteSink, Writer, read_lines

log = logging.getLogger("engram.protocol")

Reply = dict[str, Any]
_TIMED_OUT: Final = object()


@dataclass(slots=True)
class LegacySession:
    version: str
    capabilities: dict[str, Any]
    initialized: bool = False


@dataclass(slots=True)
class _InFlight:
    context: CallContext
    ticket: Ticket | None = None
    outbound: set[str] = field(default_factory=set)


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _error(id_: Any, error: RpcError) -> Reply:
    return {"jsonrpc": "2.0", "id": id_, "error": error.to_wire()}


class Server:
    """One stdio process serving both eras. `concurrent=False` answers strictly in order.

    `workers` operations run at once; `max_pending` (and `max_pending_bytes` of request
    lines) may be admitted before the reader stops reading; `max_open_questions` legacy
    questions may wait for the human at once. The pool has a thread for each of those, so
    a question never takes a run slot from the operations queued behind it.
    """

    def __init__(
        self,
        spec: ServerSpec | DeferredSpec,
        *,
        concurrent: bool = True,
        workers: int = 4,
        max_pending: int = MAX_PENDING,
        max_pending_bytes: int = MAX_PENDING_BYTES,
        max_open_questions: int = MAX_OPEN_QUESTIONS,
    ) -> None:
        self.identity: Identity = spec
        self._deferred = spec if isinstance(spec, DeferredSpec) else None
        self._spec = spec if isinstance(spec, ServerSpec) else None
        self._methods = (
            Methods(spec, StateSealer(spec.state_binding)) if isinstance(spec, ServerSpec) else None
        )
        self.session: LegacySession | None = None
        self._concurrent = concurrent
        self._pool = (
            ThreadPoolExecutor(max_workers=workers + max_open_questions, thread_name_prefix="engram-call")
            if concurrent
            else None
        )
        self._admission = Admission(max_pending, max_pending_bytes)
        self._run_slots = threading.Semaphore(workers)
        self._max_open_questions = max_open_questions
        self._writer: Writer | None = None
        self._lock = threading.Lock()
        self._inflight: dict[Any, _InFlight] = {}
        self._outbound: dict[str, Future[Any]] = {}
        self._outbound_ids = itertools.count(1)
        self._closing = False
        self._prepared = False

    # --- loop ------------------------------------------------------------------------------
    def serve(self, wire_in: IO[bytes], wire_out: ByteSink) -> None:
        """Read until EOF, then finish in-flight work and return."""
        self._writer = Writer(wire_out)
        try:
            for line in read_lines(wire_in, MAX_LINE_BYTES):
                if line is OVERSIZED:
                    self._send(_error(None, InvalidRequest("Message exceeds the 4 MiB line limit; skipped")))
                    continue
                assert isinstance(line, bytes)
                if line.strip():
                    self.handle_line(line)
                    self._prepare()
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        self._closing = True
        with self._lock:
            pending = list(self._outbound.values())
        for future in pending:
            if not future.done():
                future.set_result(None)
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def _send(self, message: Any) -> None:
        assert self._writer is not None
        self._writer.send(message)

    def handle_line(self, line: bytes) -> None:
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            if "depth" in str(exc):
                reason = f"the line nests JSON deeper than {MAX_JSON_DEPTH} levels"
            else:
                reason = "the line is not valid JSON"
            self._send(_error(None, ParseError(f"Parse error: {reason}")))
            return
        if isinstance(message, list):
            self._submit(lambda _ticket: self._batch(message), len(line))
        elif isinstance(message, dict):
            self._message(message, len(line))
        else:
            self._send(_error(None, InvalidRequest("A JSON-RPC message must be an object")))

    def _prepare(self) -> None:
        """Run the application's `prepare` once, on the reader thread: after the first line is
        answered (the handshake never waits for it) and before any operation is dispatched (no
        operation runs before it has finished)."""
        if not self._prepared:
            self._prepared = True
            if self._deferred is not None:
                spec = self._deferred.load()
                self._spec, self._methods = spec, Methods(spec, StateSealer(spec.state_binding))
            self.spec.prepare()

    @property
    def spec(self) -> ServerSpec:
        """The full spec (a DeferredSpec is loaded by `_prepare`, before any operation)."""
        assert self._spec is not None, "an operation before the server was prepared"
        return self._spec

    @property
    def methods(self) -> Methods:
        assert self._methods is not None, "an operation before the server was prepared"
        return self._methods

    def _submit(self, work: Callable[[Ticket | None], None], size: int) -> None:
        """Run an operation on the pool once the admission gate has room (blocks the reader)."""
        self._prepare()
        if self._pool is None:
            work(None)
            return
        ticket = self._admission.enter(size)

        def run() -> None:
            try:
                with self._run_slots:
                    work(ticket)
            finally:
                self._admission.leave(ticket)

        self._pool.submit(run)

    def _message(self, message: dict[str, Any], size: int = 0) -> None:
        id_ = message.get("id")
        has_id = "id" in message
        if message.get("jsonrpc") != "2.0":
            if has_id and id_ is not None:
                self._send(_error(id_ if _valid_id(id_) else None, InvalidRequest('"jsonrpc" must be "2.0"')))
            return
        method = message.get("method")
        if method is None:
            if has_id and ("result" in message or "error" in message):
                self._response(message)
            else:
                self._send(
                    _error(id_ if _valid_id(id_) else None, InvalidRequest("Not a request or response"))
                )
            return
        if not isinstance(method, str):
            if has_id:
                self._send(
                    _error(id_ if _valid_id(id_) else None, InvalidRequest('"method" must be a string'))
                )
            return
        if not has_id:
            self._notification(method, message.get("params"))
            return
        if not _valid_id(id_):
            self._send(_error(None, InvalidRequest('"id" must be a string or an integer')))
            return
        self._request(id_, method, message.get("params"), size)

    # --- requests --------------------------------------------------------------------------
    def _request(self, id_: Any, method: str, params: Any, size: int = 0) -> None:
        era = era_of(method, params)
        context = CallContext(era=era, version="", client_capabilities={})
        entry = _InFlight(context)
        with self._lock:
            self._inflight[id_] = entry

        def work(ticket: Ticket | None) -> None:
            entry.ticket = ticket
            reply = self.answer(id_, method, params, context)
            with self._lock:
                self._inflight.pop(id_, None)
            if not context.cancelled.is_set():
                self._send(reply)

        if method in INLINE_METHODS:
            work(None)
        else:
            self._submit(work, size)

    def answer(self, id_: Any, method: str, params: Any, context: CallContext) -> Reply:
        """The whole reply to one request; never raises."""
        try:
            if depth_exceeds(params, MAX_PARAMS_DEPTH):
                raise InvalidParams(
                    f"Invalid params: nested deeper than {MAX_PARAMS_DEPTH} levels, the limit; "
                    "send flatter arguments",
                    data={"maxDepth": MAX_PARAMS_DEPTH},
                )
            if context.era is Era.MODERN:
                result = self._modern(method, params, context)
            else:
                result = self._legacy(method, params, context)
            return {"jsonrpc": "2.0", "id": id_, "result": result}
        except RpcError as exc:
            return _error(id_, exc)
        except Exception:
            log.exception("request %r (%s) failed", id_, method)
            return _error(id_, InternalError("Internal error; the server logged it and keeps serving"))

    def _legacy(self, method: str, params: Any, context: CallContext) -> Any:
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise InvalidParams("params must be an object")
        route = ROUTES.get((method, Era.LEGACY))
        if route is Route.INITIALIZE:
            return self._initialize(params)
        if route is Route.PING:
            return {}
        if route is Route.MODERN_ONLY:
            raise InvalidParams(
                f"{method} is a 2026-07-28 method: send params._meta with {META_VERSION} "
                f"and {META_CAPABILITIES}"
            )
        bare_tool = self.methods.tools.get(method) if route is None else None
        if route is None and bare_tool is None:
            raise MethodNotFound(f"Method not found: {method}")
        session = self.session
        if session is None:
            raise InvalidParams(f"{method} before initialize: send initialize first")
        context.version = session.version
        context.client_capabilities = session.capabilities
        ask = self._asker(context, session)
        if bare_tool is not None:
            return self.methods.call_tool_bare(bare_tool, params, context, ask)
        if route is Route.CALL_TOOL:
            return self.methods.call_tool_legacy(params, context, ask)
        return self.methods.operation(method, params, session.version)

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.session is not None:
            raise InvalidRequest("Already initialized: initialize may be sent once per process")
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise InvalidParams(
                "initialize needs params.protocolVersion as a string",
                data={"supported": list(LEGACY_VERSIONS)},
            )
        caps = params.get("capabilities")
        version = negotiate(requested)
        self.session = LegacySession(version, caps if isinstance(caps, dict) else {})
        return {
            "protocolVersion": version,
            "capabilities": capabilities(),
            "serverInfo": {"name": self.identity.name, "version": self.identity.version},
            "instructions": self.identity.instructions,
        }

    def _modern(self, method: str, params: Any, context: CallContext) -> dict[str, Any]:
        assert isinstance(params, dict)
        meta = params["_meta"]
        if META_CAPABILITIES not in meta:
            raise InvalidParams(f"Missing params._meta[{META_CAPABILITIES!r}] (use {{}} for none)")
        caps = meta[META_CAPABILITIES]
        if not isinstance(caps, dict):
            raise InvalidParams(f"params._meta[{META_CAPABILITIES!r}] must be an object")
        requested = meta[META_VERSION]
        if not isinstance(requested, str):
            raise InvalidParams(f"params._meta[{META_VERSION!r}] must be a string")
        if requested not in MODERN_VERSIONS:
            raise UnsupportedVersion(
                f"Unsupported protocol version {requested!r}; this server serves "
                f"{', '.join(MODERN_VERSIONS)} per request, or {', '.join(LEGACY_VERSIONS)} through initialize",
                data={"supported": list(MODERN_VERSIONS), "requested": requested},
            )
        context.version = requested
        context.client_capabilities = caps
        route = ROUTES.get((method, Era.MODERN))
        if route is Route.DISCOVER:
            result = discover_result(self.identity)
        elif route is Route.CALL_TOOL:
            result = self.methods.call_tool_modern(params, context)
        elif route is Route.OPERATION:
            result = self.methods.operation(method, params, requested)
        elif route is Route.LEGACY_ONLY:
            raise MethodNotFound(
                "initialize does not exist in 2026-07-28; send it without _meta and with "
                f"params.protocolVersion (one of {', '.join(LEGACY_VERSIONS)}) for the legacy handshake"
            )
        else:
            raise MethodNotFound(f"Method not found in 2026-07-28: {method}")
        return decorate_modern(self.identity, result)

    # --- notifications and cancellation ----------------------------------------------------
    def _notification(self, method: str, params: Any) -> None:
        if method == "notifications/initialized":
            if self.session is not None:
                self.session.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            self._cancel(params.get("requestId"))

    def _cancel(self, request_id: Any) -> None:
        with self._lock:
            entry = self._inflight.get(request_id) if _valid_id(request_id) else None
            if entry is None:
                return
            entry.context.cancelled.set()
            waiting = [self._outbound[i] for i in entry.outbound if i in self._outbound]
        for future in waiting:
            if not future.done():
                future.set_result({"action": "cancel"})

    # --- server-initiated requests (legacy elicitation) -------------------------------------
    def _asker(self, context: CallContext, session: LegacySession) -> Callable[[Elicit], ElicitAnswer]:
        def ask(question: Elicit) -> ElicitAnswer:
            usable = (
                self._concurrent
                and self.spec.elicitation
                and session.initialized
                and at_least(session.version, "2025-06-18")
                and form_capable(session.capabilities)
            )
            if not usable:
                return ElicitAnswer("unavailable")
            return self._elicit(question, context, session)

        return ask

    def _elicit(self, question: Elicit, context: CallContext, session: LegacySession) -> ElicitAnswer:
        outbound_id = f"engram-{next(self._outbound_ids)}"
        future: Future[Any] = Future()
        ticket: Ticket | None = None
        with self._lock:
            if self._closing:
                return ElicitAnswer("cancel")
            if len(self._outbound) >= self._max_open_questions:
                log.warning(
                    "%d questions already wait for the human; this call falls back", len(self._outbound)
                )
                return ElicitAnswer("unavailable")
            self._outbound[outbound_id] = future
            for entry in self._inflight.values():
                if entry.context is context:
                    entry.outbound.add(outbound_id)
                    ticket = entry.ticket
        with_mode = at_least(session.version, "2025-11-25")
        self._send(
            {
                "jsonrpc": "2.0",
                "id": outbound_id,
                "method": "elicitation/create",
                "params": elicitation_params(question, with_mode=with_mode),
            }
        )
        reply = self._await_human(outbound_id, future, ticket)
        return ElicitAnswer("timeout") if reply is _TIMED_OUT else answer_of(reply)

    def _await_human(self, outbound_id: str, future: Future[Any], ticket: Ticket | None) -> Any:
        """Wait for the answer to `outbound_id` holding neither the admission gate nor a run slot.

        Only pool work reaches here (legacy questions need a concurrent server), and pool
        work holds one run slot, which is given back for the wait and taken again after.
        """
        if ticket is not None:
            self._admission.leave(ticket)
        self._run_slots.release()
        try:
            return future.result(timeout=self.spec.elicitation_timeout)
        except FutureTimeout:
            return _TIMED_OUT
        finally:
            with self._lock:
                self._outbound.pop(outbound_id, None)
            self._run_slots.acquire()
            if ticket is not None:
                self._admission.rejoin(ticket)

    def _response(self, message: dict[str, Any]) -> None:
        id_ = message.get("id")
        with self._lock:
            future = self._outbound.get(id_) if isinstance(id_, str) else None
        if future is not None and not future.done():
            future.set_result(message)

    # --- batches (2025-03-26 sessions only) -------------------------------------------------
    def _batch(self, batch: list[Any]) -> None:
        if self.session is None or self.session.version != "2025-03-26" or not batch:
            reason = "empty batch" if not batch else "batches are accepted only in 2025-03-26 sessions"
            self._send(_error(None, InvalidRequest(f"Invalid request: {reason}")))
            return
        replies: list[Reply] = []
        for item in batch:
            if (
                not isinstance(item, dict)
                or item.get("jsonrpc") != "2.0"
                or not isinstance(item.get("method"), str)
            ):
                replies.append(_error(None, InvalidRequest("Invalid batch element")))
                continue
            if "id" not in item:
                self._notification(item["method"], item.get("params"))
                continue
            if not _valid_id(item["id"]) or item["method"] == "initialize":
                replies.append(
                    _error(
                        item["id"] if _valid_id(item["id"]) else None,
                        InvalidRequest(
                            "initialize may not be batched"
                            if item["method"] == "initialize"
                            else "Invalid id"
                        ),
                    )
                )
                continue
            context = CallContext(era=Era.LEGACY, version="", client_capabilities={})
            replies.append(self.answer(item["id"], item["method"], item.get("params"), context))
        if replies:
            self._send(replies)
