"""Which method each era serves, as one table of `(method, era)` routes (protocol/loop.py
dispatches by it; the fuzz test draws its methods from it).

A route names what answers: the handshake, a ping, the discovery document, a tool call, a
listing or read (`OPERATION`: served alike in both eras), or a refusal that says why the
method is not this era's. A method with no route is "Method not found" (a legacy session may
also call a tool by its bare name: the loop looks that up in the tool table).
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from protocol.eras import Era


class Route(Enum):
    INITIALIZE = "initialize"
    PING = "ping"
    DISCOVER = "discover"
    CALL_TOOL = "call_tool"
    OPERATION = "operation"
    MODERN_ONLY = "modern_only"
    """A 2026-07-28 method sent without its `_meta`: the refusal names what to send."""
    LEGACY_ONLY = "legacy_only"
    """`initialize` sent with `_meta`: the refusal names the legacy handshake."""


OPERATIONS: Final = (
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
)
"""Listings and reads, answered the same way in both eras."""

ROUTES: Final[dict[tuple[str, Era], Route]] = {
    ("initialize", Era.LEGACY): Route.INITIALIZE,
    ("ping", Era.LEGACY): Route.PING,
    ("tools/call", Era.LEGACY): Route.CALL_TOOL,
    ("server/discover", Era.LEGACY): Route.MODERN_ONLY,
    ("subscriptions/listen", Era.LEGACY): Route.MODERN_ONLY,
    ("server/discover", Era.MODERN): Route.DISCOVER,
    ("tools/call", Era.MODERN): Route.CALL_TOOL,
    ("initialize", Era.MODERN): Route.LEGACY_ONLY,
    **{(method, era): Route.OPERATION for method in OPERATIONS for era in Era},
}

INLINE_METHODS: Final = frozenset({"initialize", "ping", "server/discover"})
"""Answered on the reader's thread, before any operation queued behind them."""
