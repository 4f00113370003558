"""A settings file checked against its JSON Schema (store.config), with a message per problem
naming the key and the allowed range. The one module of store/ that imports jsonschema, and
only for a file whose bytes have not passed before (`CheckedConfigs`), ~70 ms.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError


def problems(schema: dict[str, Any], data: Any, label: str) -> list[str]:
    """What is wrong with `data`, in a stable order (by the path of each problem); [] if valid."""
    errors = sorted(Draft202012Validator(schema).iter_errors(data), key=lambda e: list(map(str, e.path)))
    return [_describe(e, label) for e in errors]


def _describe(error: ValidationError, label: str) -> str:
    where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    schema: Any = error.schema
    if error.validator in ("minimum", "maximum"):
        return (
            f"{label}: {where} = {error.instance!r} is out of range "
            f"(allowed {schema.get('minimum')} to {schema.get('maximum')})"
        )
    if error.validator == "additionalProperties":
        allowed = ", ".join(sorted(schema.get("properties", {}))) or "none"
        return f"{label}: {where}: {error.message} (allowed keys: {allowed})"
    return f"{label}: {where}: {error.message}"
