"""Tool arguments checked against the same JSON Schema the client sees (SPEC §5, pattern 5).

Arguments that are plainly valid are accepted by `accepts`, an exact reading of the few
keywords tool schemas use; anything else (an argument it cannot vouch for, a keyword it does
not know) goes to jsonschema, which says what is wrong. So a session whose calls are valid
never imports jsonschema (~100 ms before the first answer), and every message still comes
from jsonschema. `accepts` only ever says "valid" where jsonschema does; a test compares the
two on generated arguments for every tool.

The jsonschema validator (protocol.full_validation) is compiled once per schema, when first
needed; that module is the one place jsonschema is imported.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Final

Problems = Callable[[Any], list[str]]

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
"""The dialect `accepts` reads (jsonschema's default for a schema without `$schema`)."""


def compile_validator(schema: dict[str, Any]) -> Problems:
    """Return a function listing what is wrong with an instance, in a stable order."""
    compiled: list[Problems] = []
    lock = threading.Lock()

    def problems(instance: Any) -> list[str]:
        if isinstance(instance, dict):
            nulls = sorted((k for k, v in instance.items() if v is None), key=str)
            if nulls:
                return [f"argument '{k}' is null: omit it to use the default" for k in nulls]
        if accepts(schema, instance):
            return []
        with lock:
            if not compiled:
                from protocol import full_validation  # seam: jsonschema, only when `accepts` cannot vouch

                compiled.append(full_validation.compile_problems(schema))
        return compiled[0](instance)

    return problems


# --- accepts: valid for certain, or ask jsonschema ----------------------------------------------
_ANNOTATIONS: Final = frozenset({"description", "default", "title", "examples", "$comment"})
_TYPES: Final[dict[str, Callable[[Any], bool]]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),  # 1.0 asks jsonschema
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def accepts(schema: Any, instance: Any) -> bool:
    """True only when `instance` is valid against `schema` as JSON Schema 2020-12 defines it;
    False when it is not, or when this reading cannot tell (jsonschema then decides)."""
    if not isinstance(schema, dict) or schema.get("$schema", DIALECT) != DIALECT:
        return False
    try:
        return all(_KEYWORDS[k](v, instance, schema) for k, v in schema.items() if k not in _ANNOTATIONS)
    except (KeyError, TypeError, ValueError, re.error, RecursionError):
        return False  # a keyword this reading does not know, or a value it does not expect


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_NOT_NUMBERS: Final = (str, bool, list, dict, type(None))
"""The JSON kinds a numeric bound does not apply to; any other non-int, non-float value (a
Decimal from a Python caller) is a number to jsonschema, so `accepts` leaves it to it."""


def _bound(limit: Any, instance: Any, holds: Callable[[Any, Any], bool]) -> bool:
    if not _number(limit):
        raise TypeError
    if _number(instance):
        return holds(instance, limit)
    if isinstance(instance, _NOT_NUMBERS):
        return True
    raise TypeError


def _length(
    limit: Any, instance: Any, kind: type[str | list[Any]], holds: Callable[[int, int], bool]
) -> bool:
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise TypeError
    return not isinstance(instance, kind) or holds(len(instance), limit)


def _enum(options: Any, instance: Any, schema: Any) -> bool:
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise TypeError  # equality across numbers and booleans is jsonschema's to judge
    return isinstance(instance, str) and instance in options


def _properties(properties: Any, instance: Any, schema: Any) -> bool:
    if not isinstance(properties, dict):
        raise TypeError
    return not isinstance(instance, dict) or all(
        accepts(sub, instance[name]) for name, sub in properties.items() if name in instance
    )


def _additional(allowed: Any, instance: Any, schema: dict[str, Any]) -> bool:
    if allowed is True:
        return True
    if allowed is not False or "patternProperties" in schema:
        raise TypeError
    return not isinstance(instance, dict) or set(instance) <= set(schema.get("properties", {}))


def _required(names: Any, instance: Any, schema: Any) -> bool:
    if not isinstance(names, list):
        raise TypeError
    return not isinstance(instance, dict) or all(name in instance for name in names)


def _items(sub: Any, instance: Any, schema: dict[str, Any]) -> bool:
    if not isinstance(sub, dict) or "prefixItems" in schema:
        raise TypeError
    return not isinstance(instance, list) or all(accepts(sub, item) for item in instance)


def _unique(unique: Any, instance: Any, schema: Any) -> bool:
    if not isinstance(unique, bool):
        raise TypeError
    if not unique or not isinstance(instance, list):
        return True
    if not all(isinstance(item, str) for item in instance):
        raise TypeError  # 1 and 1.0 are one value to JSON Schema: jsonschema's to judge
    return len(set(instance)) == len(instance)


@lru_cache(maxsize=64)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)  # jsonschema's own reading: Python's re, searched


def _pattern(pattern: Any, instance: Any, schema: Any) -> bool:
    return not isinstance(instance, str) or _regex(pattern).search(instance) is not None


def _type(name: Any, instance: Any, schema: Any) -> bool:
    return _TYPES[name](instance)  # a list of types: KeyError (TypeError), jsonschema decides


def _any_of(subs: Any, instance: Any, schema: Any) -> bool:
    if not isinstance(subs, list) or not subs:
        raise TypeError
    return any(accepts(sub, instance) for sub in subs)


_KEYWORDS: Final[dict[str, Callable[[Any, Any, Any], bool]]] = {
    "$schema": lambda value, instance, schema: True,  # checked to be 2020-12 above
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "enum": _enum,
    "items": _items,
    "uniqueItems": _unique,
    "anyOf": _any_of,
    "pattern": _pattern,
    "minimum": lambda limit, instance, schema: _bound(limit, instance, lambda v, m: v >= m),
    "maximum": lambda limit, instance, schema: _bound(limit, instance, lambda v, m: v <= m),
    "minLength": lambda limit, instance, schema: _length(limit, instance, str, lambda n, m: n >= m),
    "maxLength": lambda limit, instance, schema: _length(limit, instance, str, lambda n, m: n <= m),
    "minItems": lambda limit, instance, schema: _length(limit, instance, list, lambda n, m: n >= m),
    "maxItems": lambda limit, instance, schema: _length(limit, instance, list, lambda n, m: n <= m),
}
