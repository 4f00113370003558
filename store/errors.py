"""Errors raised by store/, each with a stable code the application shows to users.

* StoreError          base; `code` is the stable ENGRAM_* code, the message says how to fix it
  - InvalidId         ENGRAM_VALIDATION  not a memory id; refused before any path is built
  - NotFound          ENGRAM_NOT_FOUND   no memory with that id
  - CorruptMemory     ENGRAM_CORRUPT     a file's front matter is unreadable; the file is untouched
    - Conflict        ENGRAM_CONFLICT    a memory file holds git conflict markers; never half-read
  - ConfigError       ENGRAM_CONFIG      config.json is invalid (the store runs on defaults)
  - Busy              ENGRAM_BUSY        the workspace lock was not obtained in time; nothing changed
  - UnsafePath        ENGRAM_UNSAFE_PATH a link (or non-regular file) under `.engram/` leads outside its scope
  - NoWorkspace       ENGRAM_NO_WORKSPACE a write outside an initialised workspace or a git root; nothing created
"""

from __future__ import annotations

from typing import ClassVar


class StoreError(Exception):
    code: ClassVar[str] = "ENGRAM_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidId(StoreError):
    code = "ENGRAM_VALIDATION"


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


class UnsafePath(StoreError):
    code = "ENGRAM_UNSAFE_PATH"


class NoWorkspace(StoreError):
    code = "ENGRAM_NO_WORKSPACE"
