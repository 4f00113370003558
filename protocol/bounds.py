"""Resource bounds on what a client can make the server hold: depth, pending work, open questions.

The rest, and why: docs/design.md, `protocol/bounds.py`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Final

MAX_PENDING: Final = 64
"""Operations admitted and not finished (queued + running) before the reader stops reading."""
MAX_PENDING_BYTES: Final = 32 * 1024 * 1024
"""Bytes of request lines those operations may hold; one line alone is always admitted."""
MAX_OPEN_QUESTIONS: Final = 16
"""Server-initiated `elicitation/create` requests waiting for an answer at once."""
MAX_PARAMS_DEPTH: Final = 64
"""Nesting levels a request's `params` may have (an object or array is one level)."""
MAX_JSON_DEPTH: Final = 1024
"""orjson's own nesting limit: a line deeper than this does not parse (-32700)."""


def depth_exceeds(value: Any, limit: int) -> bool:
    """True when `value` nests objects/arrays more than `limit` levels; never recurses."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if level > limit:
            return True
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return False


@dataclass(slots=True)
class Ticket:
    """One admitted operation: its size, and whether it currently counts against the gate."""

    size: int
    inside: bool = True


class Admission:
    """Counts admitted, unfinished operations; `enter` blocks the reader at the bound."""

    def __init__(self, max_pending: int = MAX_PENDING, max_bytes: int = MAX_PENDING_BYTES) -> None:
        self._max_pending = max_pending
        self._max_bytes = max_bytes
        self._count = 0
        self._bytes = 0
        self._changed = threading.Condition()

    def enter(self, size: int) -> Ticket:
        """Wait until there is room for an operation of `size` bytes, then admit it."""
        with self._changed:
            while self._count and (self._count >= self._max_pending or self._bytes + size > self._max_bytes):
                self._changed.wait()
            self._count += 1
            self._bytes += size
        return Ticket(size)

    def leave(self, ticket: Ticket) -> None:
        """The operation finished, or stepped out to wait on the human; idempotent."""
        with self._changed:
            if not ticket.inside:
                return
            ticket.inside = False
            self._count -= 1
            self._bytes -= ticket.size
            self._changed.notify_all()

    def rejoin(self, ticket: Ticket) -> None:
        """Count a stepped-out operation again, without waiting: it is already running."""
        with self._changed:
            if ticket.inside:
                return
            ticket.inside = True
            self._count += 1
            self._bytes += ticket.size

    def pending(self) -> int:
        with self._changed:
            return self._count
