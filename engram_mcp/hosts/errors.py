"""Errors raised by host-config linking (`engram link/unlink/upgrade/doctor`).

The rest, and why: docs/design.md, `engram_mcp/hosts/errors.py`.
"""

from __future__ import annotations


class HostError(Exception):
    """A host file left untouched; `code` says why (ENGRAM_HOST_LINK, ENGRAM_HOST_PARSE…)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class LinkRefused(Exception):
    """A command that wrote nothing; `code` and a `message` for a person, naming the fix."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class JsoncError(ValueError):
    """A syntax (or shape) error at a 1-based line and column."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column

    @classmethod
    def at(cls, text: str, pos: int, message: str) -> JsoncError:
        line_start = text.rfind("\n", 0, pos) + 1
        return cls(message, text.count("\n", 0, pos) + 1, pos - line_start + 1)


class TomlError(ValueError):
    """A TOML file engram cannot edit; `line` is 1-based when tomllib named one."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class RuleError(ValueError):
    """The file's shape leaves no room for engram's rule; `fix` says what the user should change."""
