"""The approval code: what a write of memory on the page needs besides the session cookie.

The cookie proves that a browser opened the launch's URL; it does not prove that a person
clicked. An agent running as the same user can read what the browser keeps on disk (its history
held the launch's URL; its cookie store holds the session), and a server on another port of
127.0.0.1 receives the cookie whenever the browser visits it. So every write that changes
memory (Save, Retire, Restore) also carries a short code that `engram ui` prints only in the
terminal it runs in: an agent can no more read that terminal than type into it, which is what
makes `engram commit` at that terminal the human's (SPEC §7).

The code changes after every use, right or wrong: a code the browser kept in its form data or
session files is spent already, and a guess gets one try per code (8 characters of 32: about
one chance in a trillion). Declining and proposing a merge need no code: neither writes memory.
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
    """The current code of one launch; `announce` tells the terminal each code after the first."""

    def __init__(self, announce: Callable[[str], None], make: Callable[[], str] = _made) -> None:
        self._announce = announce
        self._make = make
        self._lock = threading.Lock()
        self._code = make()
        """The first is printed with the URL (engram_mcp.cli.ui_command); each next one by `spend`."""

    @property
    def current(self) -> str:
        """The code the next write needs (tests type it as a person would)."""
        return shown(self._code)

    def spend(self, typed: str | None) -> bool:
        """Whether `typed` is the current code; either way a new one is made and announced."""
        with self._lock:
            given = _typed(typed)
            right = len(given) == LENGTH and hmac.compare_digest(given.encode(), self._code.encode())
            self._renew()
            return right

    def _renew(self) -> None:
        self._code = self._make()
        self._announce(shown(self._code))


def refusal(typed: str | None) -> str:
    """The page's message when the code was missing or wrong (a new one is in the terminal)."""
    if not _typed(typed):
        return (
            "this needs the approval code shown in the terminal running `engram ui`: type it in "
            "the box next to the button (nothing was written)"
        )
    return (
        "that is not the approval code the terminal running `engram ui` shows, so nothing was "
        "written; it shows a new one now: type that one"
    )
