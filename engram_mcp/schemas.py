"""Input and output JSON Schemas of the tools: every bound published, outputs kept true."""

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


def text(description: str, max_length: int, min_length: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": description, "maxLength": max_length}
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
    return {"type": "boolean", "description": description, "default": default}


MEMORY_ID: Final = {
    "type": "string",
    "description": "A memory id: 1-64 characters of a-z, 0-9 and '-'",
    "pattern": ID_PATTERN,
    "maxLength": 64,
}
MEMORY_TYPES: Final = (*DURABLE_TYPES, NOTE_TYPE)
STRINGS: Final = {"type": "array", "items": {"type": "string"}}
_DIAGNOSTICS: Final = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["code", "message"],
        "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
    },
}


def envelope(data: dict[str, Any]) -> dict[str, Any]:
    """The output schema: the envelope always; `data`'s shape whenever `ok` is true."""
    return {
        "type": "object",
        "required": ["contract_version", "ok", "data", "diagnostics"],
        "properties": {
            "contract_version": {"const": 1},
            "ok": {"type": "boolean"},
            "data": {"type": "object"},
            "diagnostics": _DIAGNOSTICS,
        },
        "if": {"properties": {"ok": {"const": True}}},
        "then": {"properties": {"data": data}},
    }


def data(properties: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}
