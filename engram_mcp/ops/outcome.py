"""The result every tool and CLI command produces: human text + the structured envelope.

`structuredContent` is `{contract_version: 1, ok, data, diagnostics}` (SPEC §5); `ok: false`
means `isError: true` on the wire and exit code 1 in the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from protocol.spec import ToolResult
from store.errors import Next, StoreError, Words

CONTRACT_VERSION: Final = 1

HINT_KINDS: Final = {
    "token": ("token", "expires"),
    "commit": ("token",),
    "fetch_body": (),
    "list_ids": (),
    "find_ids": (),
    "search_or_save": (),
    "route_task": (),
    "save_instead": (),
    "approve": (),
    "approve_forms": (),
    "propose_again": (),
}
"""Every hint kind with its arguments: `token` (the approval token and its expiry), `commit`
(how to commit it after the human approves), `fetch_body` (how to get a card's body),
`list_ids` and `find_ids` (where every id is listed; how to find one), `search_or_save` (after
an empty load), `route_task` (after an empty search), `save_instead` (save-session found no
line), `approve` (the argument naming candidate numbers), `approve_forms` (what it takes) and
`propose_again` (how a candidate the store changed under is proposed afresh)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    ok: bool
    text: str
    """The human text, its hints already worded for the surface it was made for."""
    data: dict[str, Any] = field(default_factory=dict)
    diagnostics: tuple[tuple[str, str], ...] = ()
    hints: tuple[Next, ...] = ()
    """The next steps `text` words, as values."""

    def envelope(self) -> dict[str, Any]:
        return {
            "contract_version": CONTRACT_VERSION,
            "ok": self.ok,
            "data": self.data,
            "diagnostics": [{"code": code, "message": message} for code, message in self.diagnostics],
        }

    def tool_result(self) -> ToolResult:
        return ToolResult(text=self.text, structured=self.envelope(), is_error=not self.ok)


def failure(code: str, message: str, *, written: bool | None = None) -> Outcome:
    """An error outcome; `written=False` adds the promise that nothing changed."""
    if written is False and "nothing was" not in message.lower():
        message = message.rstrip(". ") + ". Nothing was written."
    return Outcome(ok=False, text=f"{code}: {message}", diagnostics=((code, message),))


def store_failure(exc: StoreError, *, writing: bool, words: Words) -> Outcome:
    """The one StoreError → Outcome adapter, its next steps in the surface's `words`. A write's
    error says nothing was written, unless the write had begun changing files (`exc.changed`:
    its journal completes it)."""
    return failure(exc.code, exc.text(words), written=False if writing and not exc.changed else None)


def guarded(run: Callable[[], Outcome], *, writing: bool, words: Words) -> Outcome:
    """`run()`, with the store's expected errors as error outcomes (`store_failure`)."""
    try:
        return run()
    except StoreError as exc:
        return store_failure(exc, writing=writing, words=words)


def protocol_tool_error(code: str, message: str) -> ToolResult:
    """The execution-plane error for the protocol layer (invalid arguments, handler faults)."""
    if code == "VALIDATION":
        return failure("ENGRAM_VALIDATION", message).tool_result()
    return failure(
        "ENGRAM_INTERNAL", message + "; the server logged it and keeps serving", written=False
    ).tool_result()
