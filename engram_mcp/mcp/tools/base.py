"""What a tool definition needs besides its schemas: the server flags and the handler glue
that turns an operation's Outcome (or its StoreError, through engram_mcp.ops.outcome.store_failure)
into the protocol's tool result."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engram_mcp.mcp.schemas import ENVELOPE
from engram_mcp.ops.outcome import Outcome, guarded, store_failure
from engram_mcp.ops.wording import tool_wording
from protocol.spec import CallContext, Elicit, ElicitAnswer, Tool, ToolHandler, ToolResult, ToolReturn
from store.errors import StoreError

if TYPE_CHECKING:
    from engram_mcp.ops.write_ops import Flow

READ_ONLY_ANNOTATIONS = {"readOnlyHint": True, "openWorldHint": False}


@dataclass(frozen=True, slots=True)
class Declared:
    """A tool as tools/list describes it, before it is bound to a store: name, text, schemas and
    annotations. Its annotations say whether it writes (MCP's readOnlyHint, false when absent),
    which is what read-only mode hides."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]
    output_schema: dict[str, Any] = field(default_factory=lambda: dict(ENVELOPE))
    meta: dict[str, Any] | None = None

    @property
    def writes(self) -> bool:
        return self.annotations.get("readOnlyHint") is not True

    def bound(self, run: ToolHandler, meta: dict[str, Any] | None = None) -> Tool:
        """The protocol's Tool: this declaration with the handler that runs it."""
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=self.annotations,
            meta=meta if meta is not None else self.meta,
            handler=run,
        )


@dataclass(frozen=True, slots=True)
class Flags:
    always_load: bool = False
    elicitation: bool = True
    read_only: bool = False


def handler(run: Callable[[dict[str, Any]], Outcome]) -> Callable[[dict[str, Any], CallContext], ToolResult]:
    """Adapt a read operation to the protocol's tool handler shape."""

    def handle(arguments: dict[str, Any], context: CallContext) -> ToolResult:
        return guarded(lambda: run(arguments), writing=False, words=tool_wording).tool_result()

    return handle


Start = Callable[[dict[str, Any]], "Flow | Outcome"]


def flow_handler(start: Start) -> Callable[[dict[str, Any], CallContext], ToolReturn]:
    """Adapt a write operation, which may ask the human (a Flow), to the protocol's handler shape."""

    def handle(arguments: dict[str, Any], context: CallContext) -> ToolReturn:
        try:
            begun = start(arguments)
        except StoreError as exc:
            return store_failure(exc, writing=True, words=tool_wording).tool_result()
        if isinstance(begun, Outcome):
            return begun.tool_result()
        return _adapt(begun)

    return handle


def _adapt(flow: Flow) -> Generator[Elicit, ElicitAnswer, ToolResult]:
    try:
        question = next(flow)
        while True:
            answer = yield question
            question = flow.send(answer)
    except StopIteration as stop:
        outcome: Outcome = stop.value
        return outcome.tool_result()
    except StoreError as exc:
        return store_failure(exc, writing=True, words=tool_wording).tool_result()
