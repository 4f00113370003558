"""The approval code: what a write of memory on the page needs besides the session cookie.

The rest, and why: docs/design.md, `engram_mcp/ui/approval_code.py`.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Callable
from typing import Final

ALPHABET: Final = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""32 characters that are not misread for one another (no I, O, 0 or 1)."""
LENGTH: Final = 8
FIELD: Final = "code"
"""The form field of the code."""
CODE: Final = "ENGRAM_UI_CODE"


def _made() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def shown(code: str) -> str:
    """As the terminal prints it: two groups of four."""
    return f"{code[:4]}-{code[4:]}"


def _typed(text: str | None) -> str:
    """What a person typed, as compared: case, spaces and dashes do not matter."""
    return "".join(c for c in (text or "").upper() if c not in " -\t")


class ApprovalCode:
    """The current code of one launch; `announce` puts a line in the terminal for each code after
    the first, saying what the last one was used for, so a use that was not the person's shows."""

    def __init__(self, announce: Callable[[str], None], make: Callable[[], str] = _made) -> None:
        self._announce = announce
        self._make = make
        self._lock = threading.Lock()
        self._code = make()
        """The first is printed with the URL (engram_mcp.cli.ui_command); each next one by `spend`."""
        self._wrong = 0
        """Wrong codes in a row: at MAX_WRONG the launch takes no more writes (`locked`)."""

    @property
    def current(self) -> str:
        """The code the next write needs (tests type it as a person would)."""
        return shown(self._code)

    @property
    def locked(self) -> bool:
        return self._wrong >= MAX_WRONG

    def spend(self, typed: str | None, action: str) -> bool:
        """Whether `typed` is the current code (never once `locked`); either way a new one is
        made and said in the terminal with what happened to the last."""
        with self._lock:
            if self.locked:
                return False
            given = _typed(typed)
            right = len(given) == LENGTH and hmac.compare_digest(given.encode(), self._code.encode())
            self._wrong = 0 if right else self._wrong + 1
            self._code = self._make()
            if right:
                self._announce(f"code used to {action}; the next approval code is {self.current}")
            elif self.locked:
                self._announce(
                    f"{MAX_WRONG} wrong approval codes in a row: something other than you may be "
                    "sending writes to the page, so it takes no more. Stop it (Ctrl-C) and run "
                    "`engram ui` again"
                )
            elif given:
                self._announce(
                    f"a wrong code was typed to {action}; the next approval code is {self.current}"
                )
            else:
                self._announce(
                    f"a write came without a code ({action}); the next approval code is {self.current}"
                )
            return right


MAX_WRONG: Final = 3


def refusal(typed: str | None, locked: bool) -> str:
    """The page's message when the code was missing or wrong (a new one is in the terminal)."""
    if locked:
        return (
            f"after {MAX_WRONG} wrong approval codes in a row this page takes no more writes: stop "
            "`engram ui` (Ctrl-C) and run it again (nothing was written)"
        )
    if not _typed(typed):
        return (
            "this needs the approval code shown in the terminal running `engram ui`: type it in "
            "the box next to the button (nothing was written)"
        )
    return (
        "that is not the approval code the terminal running `engram ui` shows, so nothing was "
        "written; it shows a new one now: type that one"
    )
