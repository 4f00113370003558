"""Tool arguments checked against the same JSON Schema the client sees (SPEC §5, pattern 5).

A validator is compiled once per schema, on first use (jsonschema is imported lazily so it
costs nothing before the first call). It is a pure function: sorted, human messages that
name the argument and the allowed range; it never raises for bad input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

Problems = Callable[[Any], list[str]]

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "an array",
    "object": "an object",
}


def check_schema(schema: dict[str, Any]) -> None:
    """Raise if `schema` itself is not a valid JSON Schema (used by tests and at registration)."""
    from jsonschema.validators import validator_for

    validator_for(schema).check_schema(schema)


def compile_validator(schema: dict[str, Any]) -> Problems:
    """Return a function listing what is wrong with an instance, in a stable order."""
    from jsonschema.validators import validator_for

    cls = validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)

    def problems(instance: Any) -> list[str]:
        if isinstance(instance, dict):
            nulls = sorted(k for k, v in instance.items() if v is None)
            if nulls:
                return [f"argument '{k}' is null: omit it to use the default" for k in nulls]
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
        extra = sorted(set(instance) - set(allowed))
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
