"""What an application hands the protocol layer: tools, resources, prompts, identity."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from protocol.eras import Era


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's answer: human text, optional structured content, and whether it is an error."""

    text: str
    structured: dict[str, Any] | None = None
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Elicit:
    """A question a tool handler yields; `key` names it across rounds."""

    key: str
    message: str
    schema: dict[str, Any]


ElicitAction = Literal["accept", "decline", "cancel", "unavailable", "timeout", "error"]


@dataclass(frozen=True, slots=True)
class ElicitAnswer:
    """The human's answer, or why there is none (`unavailable`: the client cannot ask)."""

    action: ElicitAction
    content: dict[str, Any] | None = None


ToolReturn: TypeAlias = ToolResult | Generator[Elicit, ElicitAnswer, ToolResult]


@dataclass(slots=True)
class CallContext:
    """Per-request facts a handler may read; it never learns the wire shape of either era."""

    era: Era
    version: str
    client_capabilities: dict[str, Any]
    cancelled: threading.Event = field(default_factory=threading.Event)


ToolHandler = Callable[[dict[str, Any], CallContext], ToolReturn]


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: ToolHandler
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def listing(self) -> dict[str, Any]:
        """The newest wire shape of this tool; down-levelled later per version."""
        entry: dict[str, Any] = {"name": self.name}
        if self.title:
            entry["title"] = self.title
        entry["description"] = self.description
        entry["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            entry["outputSchema"] = self.output_schema
        if self.annotations:
            entry["annotations"] = self.annotations
        if self.meta:
            entry["_meta"] = self.meta
        return entry


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    title: str
    description: str
    arguments: Sequence[PromptArgument]
    render: Callable[[dict[str, str]], list[dict[str, Any]]]
    """Returns the prompt's messages for the given arguments."""


@dataclass(frozen=True, slots=True)
class Resources:
    """The resource surface: a listing, templates, and a reader (None = not found)."""

    listing: Callable[[], list[dict[str, Any]]]
    templates: Sequence[dict[str, Any]]
    read: Callable[[str], list[dict[str, Any]] | None]


@dataclass(frozen=True, slots=True)
class ServerSpec:
    name: str
    version: str
    instructions: str
    tools: Sequence[Tool]
    resources: Resources
    prompts: Sequence[Prompt]
    tool_error: Callable[[str, str], ToolResult]
    """Builds the execution-plane error result from (code, message)."""
    unknown_tool_hint: Callable[[str], str] = lambda name: f"Unknown tool: {name}"
    state_binding: str = ""
    """Bound into every `requestState`, e.g. the workspace, so a state is only good here."""
    elicitation: bool = True
    """False (`--no-elicitation`): handlers get `unavailable` and take the token path."""
    elicitation_timeout: float = 60.0
    prepare: Callable[[], None] = lambda: None
    """Called once, on the reader thread, after the first line is answered and before the first
    operation is dispatched: the application's heavy imports go here, so the handshake never
    waits for them and no operation can race them."""


@dataclass(frozen=True, slots=True)
class DeferredSpec:
    """A server known by what the handshake needs, built in full later: `load` runs once, on the
    reader thread, after the first line is answered and before the first operation is
    dispatched. So `initialize` and `server/discover` never wait for the application's imports
    or its store, and no operation can run before them. The loaded spec's `prepare` then runs
    as usual."""

    name: str
    version: str
    instructions: str
    load: Callable[[], ServerSpec]


class Identity(Protocol):
    """What `initialize`, `server/discover` and every modern result say about the server."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def instructions(self) -> str: ...
