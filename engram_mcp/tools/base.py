"""What a tool definition needs besides its schemas: the server flags and the handler glue."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engram_mcp.outcome import Outcome
from engram_mcp.reads import guarded
from protocol.spec import CallContext, ToolResult

READ_ONLY_ANNOTATIONS = {"readOnlyHint": True, "openWorldHint": False}


@dataclass(frozen=True, slots=True)
class Flags:
    always_load: bool = False
    elicitation: bool = True
    read_only: bool = False


def handler(run: Callable[[dict[str, Any]], Outcome]) -> Callable[[dict[str, Any], CallContext], ToolResult]:
    """Adapt an Outcome-returning operation to the protocol's tool handler shape."""

    def handle(arguments: dict[str, Any], context: CallContext) -> ToolResult:
        return guarded(lambda: run(arguments)).tool_result()

    return handle
