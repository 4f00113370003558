"""Errors raised by host-config linking (`engram link/unlink/upgrade/doctor`).

* HostError   a host file engram leaves untouched; `code` is the ENGRAM_HOST_* code the
              command reports for that file: ENGRAM_HOST_LINK (a dangling link),
              ENGRAM_HOST_UNREADABLE (a folder, FIFO, device, loop of links, too large, or
              unreadable: edits.read_bytes), ENGRAM_HOST_PARSE (not UTF-8, unparseable)
* LinkRefused a `link` or `unlink` that wrote nothing, or an `upgrade` that left the project's
              files alone: `code` is ENGRAM_NOT_ON_PATH (the project's files would name a
              command a teammate's machine cannot run, path_hint.py) or ENGRAM_GLOBAL_ONLY (the
              host has no project config)
* JsoncError  a JSON/JSONC host file that does not parse, or whose shape leaves no room for
              engram's entry, at a 1-based line and column (jsonc.py)
* TomlError   a Codex `config.toml` that does not parse, or an engram entry that is not
              engram's managed block (codex_toml.py)
* RuleError   a host file whose shape leaves no room for engram's approval rule (gate_rules.py)

The three file-format errors are ValueErrors that `link` turns into a HostError or a Result
naming the file; none of them reaches the user as a traceback.
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
