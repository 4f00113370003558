"""Errors raised by store/, each with a stable code the application shows to users.

The rest, and why: docs/design.md, `store/errors.py`.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass

from store.safety import untrusted

MESSAGE_LIMIT = 2000
"""Characters of an error message or a diagnostic, after escaping."""


@dataclass(frozen=True, slots=True)
class Next:
    """What the reader can do next (or the argument to fix), as a value: a `kind` and its
    arguments. The store knows no tool and no command, so it names the step and each surface
    words it: the tools in engram_mcp.ops.wording, the CLI in engram_mcp.cli.common (the kinds
    are listed in engram_mcp.ops.outcome.HINT_KINDS)."""

    kind: str
    args: tuple[tuple[str, str], ...] = ()

    def arg(self, name: str) -> str:
        return dict(self.args)[name]


Words = Callable[[Next], str]
"""A surface's words for a Next."""


def worded(said: tuple[str | Next, ...], words: Words) -> str:
    """Text in pieces with each Next in a surface's words."""
    return "".join(piece if isinstance(piece, str) else words(piece) for piece in said)


class StoreError(Exception):
    code: str = "ENGRAM_ERROR"
    """The stable ENGRAM_* code: a class attribute, set per instance only by TokenRefused."""
    changed: bool = False
    """Set by store.write.transaction when the error interrupted a write after its journal began
    changing files (the journal completes it at the next write or start)."""

    def __init__(self, message: str, *said: str | Next) -> None:
        """`said`: more of the message, where a Next is a step the surface words (`text`)."""
        self.said: tuple[str | Next, ...] = tuple(  # it may quote a clone's file
            untrusted.line(piece, MESSAGE_LIMIT) if isinstance(piece, str) else piece
            for piece in (message, *said)
        )
        bare = worded(self.said, lambda step: "")
        self.message = bare.strip(" :;,") if len(self.said) > 1 else bare
        """The message without its next steps (what a log shows)."""
        super().__init__(self.message)

    def text(self, words: Words) -> str:
        """The whole message in a surface's words."""
        return untrusted.line(worded(self.said, words), MESSAGE_LIMIT)


class InvalidId(StoreError):
    code = "ENGRAM_VALIDATION"


class InvalidCandidate(StoreError):
    code = "ENGRAM_VALIDATION"


class InvalidSelection(StoreError):
    code = "ENGRAM_VALIDATION"


class InvalidNote(StoreError):
    code = "ENGRAM_VALIDATION"


class InvalidChange(StoreError):
    """The change is not possible in the memory's current state; the message says what is."""

    code = "ENGRAM_VALIDATION"


class Refused(StoreError):
    code = "ENGRAM_REFUSED"


class TokenRefused(StoreError):
    """A commit refused before anything was written; `code` says which refusal."""

    def __init__(self, code: str, message: str, *said: str | Next) -> None:
        super().__init__(message, *said)
        self.code = code


class ReadOnly(StoreError):
    code = "ENGRAM_READ_ONLY"


UNWRITABLE_ERRNOS = frozenset((errno.EROFS, errno.EACCES, errno.EPERM))
"""What a write gets from a read-only file system, a sandbox or a folder the user cannot write."""


def unwritable(what: str, exc: OSError) -> ReadOnly:
    """The one message for a write the file system refused: the cause and the fix."""
    cause = exc.strerror or type(exc).__name__
    return ReadOnly(
        f"{what} cannot be written ({cause}): this may be a sandbox that lets the process read "
        "the workspace but not write it (such as Codex's read-only sandbox), or a folder you "
        "cannot write. Run the command in your own terminal, or allow writes to the workspace; "
        "nothing was written"
    )


class NotFound(StoreError):
    code = "ENGRAM_NOT_FOUND"


class CorruptMemory(StoreError):
    code = "ENGRAM_CORRUPT"


class Conflict(CorruptMemory):
    code = "ENGRAM_CONFLICT"


class ConfigError(StoreError):
    code = "ENGRAM_CONFIG"


class Busy(StoreError):
    code = "ENGRAM_BUSY"


class StaleEdit(StoreError):
    """The file changed on disk while a person was editing a copy of it (not a Busy: no lock
    was waited for, and waiting would not help)."""

    code = "ENGRAM_BUSY"


class UnsafePath(StoreError):
    code = "ENGRAM_UNSAFE_PATH"


class NoWorkspace(StoreError):
    code = "ENGRAM_NO_WORKSPACE"


class NotRegular(OSError):
    """A path that is a FIFO, device, socket, folder or symbolic link: never opened for reading."""


class Untrusted(ValueError):
    """A sealed file that did not check: never used, rebuilt from the memories. `stale` when
    it is in a layout an earlier engram wrote: stale derived data, nothing to tell the user."""

    def __init__(self, reason: str, *, stale: bool = False) -> None:
        super().__init__(reason)
        self.stale = stale


class CorruptIndex(ValueError):
    """A saved search index that does not add up; the caller rebuilds it from the memories."""


class ModelUnavailable(Exception):
    """The configured vector model cannot be loaded; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class Problem:
    """A file engram could not use; `file` is scope-relative, never an absolute path."""

    code: str
    file: str
    message: str

    def __post_init__(self) -> None:
        # Every diagnostic quotes a clone's file name, and often its text: escaped here once.
        object.__setattr__(self, "file", untrusted.line(self.file))
        object.__setattr__(self, "message", untrusted.line(self.message, MESSAGE_LIMIT))
