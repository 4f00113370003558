"""Errors raised by the application (`engram_mcp/`), apart from the store's and the protocol's.

* UsageError   a command line the parser accepted but the command cannot use (exit 2)
* Fixable      a failure the user can fix (exit 1), with an `ENGRAM_*` code
* Terminated   SIGTERM, raised in the main thread so every `finally` runs (exit 143)

Store failures are `store.errors.StoreError`, wire failures `protocol.errors.RpcError`, host
config failures `engram_mcp.hosts.errors.HostError`.
"""

from __future__ import annotations


class UsageError(Exception):
    """A command line the parser accepted but the command cannot use (exit 2)."""


class Fixable(Exception):
    """A failure the user can fix (exit 1): a file that cannot be read, a question not answered."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Terminated(Exception):
    """SIGTERM, raised in the main thread by the CLI's and the server's handler, so locks, temp
    files and in-flight writes finish in their `finally` before the process exits 143."""
