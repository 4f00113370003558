"""The jsonschema side of argument validation: sorted, human messages that name the argument
and the allowed range. Imported by protocol.validation only for arguments its exact check
cannot vouch for, so a session whose calls are valid never loads jsonschema.

jsonschema is imported by its package name first (`import jsonschema`), never a submodule
first: two threads importing the package and a submodule at once can each hold the other's
import lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import jsonschema
from jsonschema.exceptions import ValidationError

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "an array",
    "object": "an object",
}


def compile_problems(schema: dict[str, Any]) -> Callable[[Any], list[str]]:
    """A pure function listing what is wrong with an instance, in a stable order; it never
    raises for bad input. Raises SchemaError when `schema` itself is not a JSON Schema."""
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)

    def problems(instance: Any) -> list[str]:
        errors = sorted(validator.iter_errors(instance), key=lambda e: (list(map(str, e.path)), e.validator))
        return [_describe(e) for e in errors]

    return problems


def _name(error: ValidationError) -> str:
    parts = [str(p) if isinstance(p, str) else f"[{p}]" for p in error.path]
    return "".join(p if p.startswith("[") else f".{p}" for p in parts).lstrip(".")


def _range(schema: dict[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f"allowed {low} to {high}"
    if low is not None:
        return f"allowed {low} or more"
    return f"allowed {high} or less"


def _show(value: Any) -> str:
    """A value for a message, cut short so a hostile argument is not echoed whole."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _describe(error: ValidationError) -> str:
    name, kind = _name(error), error.validator
    schema = cast(dict[str, Any], error.schema)
    label = f"argument '{name}'" if name else "arguments"
    if kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        instance = cast(dict[str, Any], error.instance)
        extra = sorted(set(instance) - set(allowed), key=str)
        return (
            f"unknown argument {', '.join(repr(e) for e in extra)} (allowed: {', '.join(allowed) or 'none'})"
        )
    if kind == "required":
        missing = sorted(set(schema.get("required", [])) - set(cast(dict[str, Any], error.instance)))
        return "missing required argument " + ", ".join(repr(m) for m in missing)
    if kind == "type":
        wanted = schema.get("type")
        wanted_text = _TYPE_NAMES.get(wanted, str(wanted)) if isinstance(wanted, str) else str(wanted)
        return f"{label} must be {wanted_text}, got {type(error.instance).__name__}"
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return f"{label} = {_show(error.instance)} is out of range ({_range(schema)})"
    if kind == "maxLength":
        return f"{label} is too long: at most {schema['maxLength']} characters"
    if kind == "minLength":
        return f"{label} is too short: at least {schema['minLength']} character(s)"
    if kind == "maxItems":
        return f"{label} has too many items: at most {schema['maxItems']}"
    if kind == "minItems":
        return f"{label} has too few items: at least {schema['minItems']}"
    if kind == "enum":
        options = ", ".join(str(o) for o in schema["enum"])
        return f"{label} = {_show(error.instance)} is not one of: {options}"
    if kind == "pattern":
        expected = schema.get("description") or f"the pattern {schema['pattern']}"
        return f"{label} = {_show(error.instance)} is not valid: expected {expected}"
    if kind in ("anyOf", "oneOf") and schema.get("description"):
        return f"{label} = {_show(error.instance)} is not valid ({schema['description']})"
    if kind == "uniqueItems":
        return f"{label} must not repeat items"
    return f"{label}: {error.message}"
