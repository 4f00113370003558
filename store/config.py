"""Settings: workspace `.engram/config.json` over `$ENGRAM_HOME/config.json` over defaults (SPEC §9).

Each file is validated with a JSON Schema; an invalid file is ignored as a whole and reported
as a diagnostic naming the key and the allowed range, so engram still runs on the rest.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import orjson

from store.ids import ID_PATTERN

_SLUG: Final = ID_PATTERN  # matched in full: no trailing newline


def _int(low: int, high: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


def _unit() -> dict[str, Any]:
    return {"type": "number", "minimum": 0, "maximum": 1}


_WORDS: Final = {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": 200}

SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "load": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "budget_tokens": _int(100, 32000),
                "full_cap_tokens": _int(1000, 200000),
                "working_ttl_days": _int(1, 365),
            },
        },
        "mcp": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"resource_limit": _int(0, 200)},
        },
        "dedup": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"duplicate": _unit(), "related": _unit()},
        },
        "routes": {
            "type": "object",
            "propertyNames": {"pattern": _SLUG},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"keywords": _WORDS, "tags": _WORDS, "types": _WORDS},
            },
        },
        "search": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "vectors": {"type": "boolean"},
                "vector_model": {"type": "string", "minLength": 1, "maxLength": 4096},
                "bm25_weight": _unit(),
            },
        },
        "role": {"type": "string", "pattern": _SLUG},
        "rule_variant": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "mode": {"enum": ["base", "fixed", "rotate"]},
                "variant": {"type": "string", "maxLength": 64},
                "ids": {"type": "object"},
            },
        },
    },
}


@dataclass(frozen=True, slots=True)
class Config:
    budget_tokens: int = 2000
    full_cap_tokens: int = 20000
    working_ttl_days: int = 7
    resource_limit: int = 20
    dedup_duplicate: float = 0.9
    dedup_related: float = 0.6
    routes: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    role: str = "default"
    rule_variant: dict[str, Any] = field(default_factory=lambda: {"mode": "base"})
    vectors: bool = True
    """`search.vectors`: use the optional vector signal when the `vectors` extra is installed."""
    vector_model: str = ""
    """`search.vector_model`: a local static-model folder instead of the bundled one (user config only)."""
    bm25_weight: float = 0.6
    """`search.bm25_weight`: BM25's share of the fused score (the vector signal has the rest)."""
    diagnostics: tuple[tuple[str, str], ...] = ()


def _describe(error: Any, label: str) -> str:
    where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    schema = error.schema
    if error.validator in ("minimum", "maximum"):
        return (
            f"{label}: {where} = {error.instance!r} is out of range "
            f"(allowed {schema.get('minimum')} to {schema.get('maximum')})"
        )
    if error.validator == "additionalProperties":
        allowed = ", ".join(sorted(schema.get("properties", {}))) or "none"
        return f"{label}: {where}: {error.message} (allowed keys: {allowed})"
    return f"{label}: {where}: {error.message}"


def read_config_file(path: Path, label: str) -> tuple[dict[str, Any], list[str]]:
    """The file's settings, or ({}, problems) when it is unreadable or invalid."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, []
    except OSError as exc:
        return {}, [f"{label}: cannot be read ({exc.strerror})"]
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return {}, [f"{label}: not valid JSON ({exc}); fix the file or delete it to use defaults"]
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(map(str, e.path)))
    if errors:
        return {}, [_describe(e, label) + "; the file is ignored until fixed" for e in errors]
    assert isinstance(data, dict)
    return data, []


def merge_config(layers: list[dict[str, Any]], problems: list[str]) -> Config:
    """Later layers win key by key; `routes` merge per class."""
    values: dict[str, Any] = {}
    routes: dict[str, dict[str, list[str]]] = {}
    for layer in layers:
        for section, keys in (("load", ("budget_tokens", "full_cap_tokens", "working_ttl_days")),):
            for key in keys:
                with contextlib.suppress(KeyError, TypeError):
                    values[key] = layer[section][key]
        with contextlib.suppress(KeyError, TypeError):
            values["resource_limit"] = layer["mcp"]["resource_limit"]
        with contextlib.suppress(KeyError, TypeError):
            values["dedup_duplicate"] = layer["dedup"]["duplicate"]
        with contextlib.suppress(KeyError, TypeError):
            values["dedup_related"] = layer["dedup"]["related"]
        for key in ("vectors", "bm25_weight"):
            with contextlib.suppress(KeyError, TypeError):
                values[key] = layer["search"][key]
        for name, spec in (layer.get("routes") or {}).items():
            routes[name] = {k: list(v) for k, v in spec.items()}
        if "role" in layer:
            values["role"] = layer["role"]
        if "rule_variant" in layer:
            values["rule_variant"] = dict(layer["rule_variant"])
    return Config(**values, routes=routes, diagnostics=tuple(("ENGRAM_CONFIG", p) for p in problems))


def load_config(user_path: Path, project_path: Path) -> Config:
    layers: list[dict[str, Any]] = []
    problems: list[str] = []
    for path, label in ((user_path, "$ENGRAM_HOME/config.json"), (project_path, ".engram/config.json")):
        data, found = read_config_file(path, label)
        layers.append(data)
        problems.extend(found)
    model, found = _vector_model(layers[0], layers[1])
    config = merge_config(layers, problems + found)
    return replace(config, vector_model=model) if model else config


def _vector_model(user: dict[str, Any], project: dict[str, Any]) -> tuple[str, list[str]]:
    """`search.vector_model`, honoured from the user's config only: a workspace's config travels
    through git, and a clone may not name a path outside its scope (SPEC §2). `~` is expanded;
    whether the folder holds a usable model is checked when it is loaded (store.vectors)."""
    problems: list[str] = []
    if isinstance(project.get("search"), dict) and "vector_model" in project["search"]:
        problems.append(
            ".engram/config.json: search.vector_model is ignored in a workspace config (a clone may not "
            "name a path outside the workspace); set it in $ENGRAM_HOME/config.json"
        )
    section = user.get("search")
    value = section.get("vector_model", "") if isinstance(section, dict) else ""
    return (str(Path(value).expanduser()) if value else ""), problems
