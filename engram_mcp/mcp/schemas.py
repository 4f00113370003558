"""Input and output JSON Schemas of the tools: every bound published, outputs kept true.

Every character here is in every session's tools/list: a property's description says only what
its name, type, enum and bounds do not."""

from __future__ import annotations

from typing import Any, Final

from store.files.ids import ID_PATTERN
from store.files.memory import DURABLE_TYPES, NOTE_TYPE

SCOPES: Final = ("project", "user")


def obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def text(description: str | None, max_length: int, min_length: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if description:
        schema["description"] = description
    schema["maxLength"] = max_length
    if min_length:
        schema["minLength"] = min_length
    return schema


def integer(description: str, low: int, high: int, default: int) -> dict[str, Any]:
    return {
        "type": "integer",
        "description": description,
        "minimum": low,
        "maximum": high,
        "default": default,
    }


def flag(description: str, default: bool = False) -> dict[str, Any]:
    """A boolean argument; only a true default is published (an omitted flag is false)."""
    schema: dict[str, Any] = {"type": "boolean", "description": description}
    if default:
        schema["default"] = True
    return schema


def memory_id(description: str) -> dict[str, Any]:
    """A memory id argument. The description leads with the format: a pattern error quotes it."""
    return {"type": "string", "description": description, "pattern": ID_PATTERN, "maxLength": 64}


MEMORY_TYPES: Final = (*DURABLE_TYPES, NOTE_TYPE)

# --- outputs -------------------------------------------------------------------------------------
ENVELOPE: Final = {"type": "object", "required": ["contract_version", "ok", "data", "diagnostics"]}
"""The output schema of every tool but the three reads `enveloped` types: the envelope's four keys
(SPEC §5). What `data` holds per tool is SPEC §5's table and the tests'. Spelling it here cost every session's tools/list about 4,000
characters that Claude Code never shows its model (it passes name, description and inputSchema
only). A failure's `data` is `{}`, and clients validate error results too, so no `data` key
could be required here without an if/then per tool."""


def enveloped(data: dict[str, Any]) -> dict[str, Any]:
    """The envelope with the types of `data`'s keys, for the read tools whose answers a typed client
    (Codex's code mode) works with. No key of `data` is required: a failure's `data` is `{}`."""
    return {**ENVELOPE, "properties": {"data": {"type": "object", "properties": data}}}


def records(*keys: str) -> dict[str, Any]:
    """An array of records, each with at least these keys."""
    return {"type": "array", "items": {"type": "object", "required": list(keys)}}
