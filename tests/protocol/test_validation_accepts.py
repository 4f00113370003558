"""`accepts` (valid arguments, without jsonschema) never says "valid" where jsonschema does not,
on every tool's real input schema; and a session of valid calls never imports jsonschema."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from engram_mcp.mcp.app import server_spec
from engram_mcp.mcp.tools.base import Flags
from protocol.validation import accepts, compile_validator
from store.store import Store
from tests.support.paths import REPO

SCALARS: list[Any] = [
    "", "x", "use-uv-for-python", "Use-UV", "a\n", "-leading", "a" * 64, "a" * 65, "z" * 2001,
    "tiered", "cards", "bodies", "rule", "fact", "accept", "project", "user",
    0, 1, -1, 99, 100, 101, 2000, 31999, 32000, 32001, 10**20, 1.0, 100.0, 1.5, -0.0,
    True, False, None,
]  # fmt: skip


def _tools(workspace: Path) -> dict[str, Any]:
    return {t.name: t for t in server_spec(Store(workspace), Flags()).tools}


def _near(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values for `schema`: mostly valid ones, now and then one just past a limit it sets."""
    valid, edge = _valid_and_edge(schema)
    return st.one_of(*[valid] * 8, edge)


def _valid_and_edge(schema: dict[str, Any]) -> tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"]), st.sampled_from(["not-an-option", 1, True])
    if "anyOf" in schema:
        return st.one_of(*[_near(sub) for sub in schema["anyOf"]]), st.sampled_from(SCALARS)
    kind = schema.get("type")
    if kind == "string":
        low, high = schema.get("minLength", 0), min(schema.get("maxLength", 40), 40)
        alphabet = st.sampled_from("ab-_9 Z\n")
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True), st.text(alphabet, max_size=high + 1)
        over = st.just("z" * (schema.get("maxLength", 40) + 1))
        return st.text(alphabet, min_size=low, max_size=high), st.one_of(over, st.just(""), st.just(3))
    if kind == "integer":
        low, high = schema.get("minimum", -5), schema.get("maximum", 10**6)
        return st.integers(low, high), st.sampled_from([low - 1, high + 1, float(low), low + 0.5, True])
    if kind == "number":
        return st.floats(0, 1), st.sampled_from([-0.5, 1.5, True, "1"])
    if kind == "boolean":
        return st.booleans(), st.sampled_from([0, 1, "true"])
    if kind == "array":
        low, high = schema.get("minItems", 0), min(schema.get("maxItems", 4), 4)
        items = schema.get("items", {"type": "string"})
        valid_items, _ = _valid_and_edge(items)
        unique = schema.get("uniqueItems", False)
        return (
            st.lists(valid_items, min_size=low, max_size=high, unique=unique),
            st.one_of(st.lists(_near(items), max_size=high + 1), st.just(["a", "a"]), st.just("a")),
        )
    if kind == "object" and "properties" in schema:
        return _arguments(schema, unknown=False), _arguments(schema, unknown=True)
    return st.sampled_from(SCALARS), st.sampled_from(SCALARS)


def _arguments(schema: dict[str, Any], unknown: bool | None = None) -> st.SearchStrategy[dict[str, Any]]:
    """An object for `schema`: its required properties (one left out now and then), any of
    the others, and now and then one it does not know."""
    properties = schema.get("properties", {})
    required = [name for name in schema.get("required", []) if name in properties]
    optional = {name: _near(sub) for name, sub in properties.items() if name not in required}
    full = st.fixed_dictionaries({name: _near(properties[name]) for name in required}, optional=optional)
    if unknown is False:
        return full
    odd = st.one_of(
        full.map(lambda d: {**d, "unknown": "x"}),
        full.map(lambda d: {k: v for k, v in d.items() if k not in required[:1]}),
    )
    return odd if unknown else st.one_of(full, full, full, odd)


def _agreement(name: str, schema: dict[str, Any], counts: dict[str, int]) -> Any:
    validator = Draft202012Validator(schema)

    @settings(max_examples=150, deadline=None, database=None)
    @given(_arguments(schema))
    def check(arguments: dict[str, Any]) -> None:
        valid = validator.is_valid(arguments)
        if accepts(schema, arguments):
            assert valid, (name, arguments)
            counts["accepted"] += 1
        counts["valid"] += valid

    return check


def test_accepts_agrees_with_jsonschema_on_every_tools_arguments(workspace: Path) -> None:
    """Generated arguments per tool: whatever `accepts` passes, jsonschema passes; and it
    passes a good share of what jsonschema passes (the fast path is not idle)."""
    counts = {"valid": 0, "accepted": 0}
    for tool in _tools(workspace).values():
        _agreement(tool.name, tool.input_schema, counts)()
    assert counts["accepted"] >= counts["valid"] * 0.8, counts


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"type": "integer"}, 2.0),  # an integer to JSON Schema; jsonschema says so
        ({"enum": [1, 2]}, True),  # equality across numbers and booleans
        ({"type": ["string", "null"]}, "x"),
        ({"type": "string", "format": "email"}, "x"),  # a keyword this reading does not know
        ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}, "x"),
        ({"type": "array", "uniqueItems": True}, [1, 1.0]),
        ({"additionalProperties": {"type": "string"}}, {"a": "x"}),
    ],
)
def test_what_accepts_cannot_vouch_for_goes_to_jsonschema(schema: dict[str, Any], instance: Any) -> None:
    assert accepts(schema, instance) is False


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"type": "integer", "minimum": 1}, 0),
        ({"type": "integer", "maximum": 5}, 6),
        ({"type": "integer"}, True),
        ({"type": "string", "minLength": 1}, ""),
        ({"type": "string", "maxLength": 2}, "abc"),
        ({"type": "string", "pattern": "^[a-z]+$"}, "A"),
        ({"enum": ["a", "b"]}, "c"),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True}, ["a", "a"]),
        ({"type": "array", "items": {"type": "string"}}, ["a", 1]),
        ({"type": "array", "minItems": 1}, []),
        ({"type": "array", "maxItems": 1}, ["a", "b"]),
        ({"type": "object", "required": ["a"]}, {}),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
            {"b": "x"},
        ),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, {"a": 1}),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, True),
        ({"minimum": 5}, Decimal(1)),  # a number to jsonschema, though no JSON parser makes one
        ({"maximum": 0}, Fraction(1, 2)),
        ({"anyOf": [{"type": "string"}, {"maximum": 3}]}, Decimal(10)),
    ],
)
def test_accepts_refuses_what_each_keyword_forbids(schema: dict[str, Any], instance: Any) -> None:
    assert not Draft202012Validator(schema).is_valid(instance)
    assert accepts(schema, instance) is False


def test_valid_calls_and_a_small_search_import_neither_jsonschema_nor_numpy(
    workspace: Path,
) -> None:
    """(A config.json is still checked by jsonschema when read: this store has none.)"""
    (workspace / ".engram" / "config.json").unlink()
    code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from engram_mcp.mcp.app import server_spec
        from engram_mcp.mcp.tools.base import Flags
        from protocol.validation import compile_validator
        from store.store import Store
        tools = {{t.name: t for t in server_spec(Store(Path({str(workspace)!r})), Flags()).tools}}
        search = compile_validator(tools["engram_search"].input_schema)
        load = compile_validator(tools["engram_load"].input_schema)
        assert search({{"query": "uv python", "limit": 5}}) == []
        assert load({{"query": "fix the invoice export", "budget_tokens": 1500}}) == []
        store = Store(Path({str(workspace)!r}))
        assert store.search("uv python environments")
        print("jsonschema" in sys.modules, "numpy" in sys.modules)
        print(load({{"budget_tokens": 5}}))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    first, second = done.stdout.splitlines()
    assert first == "False False"  # nor numpy, for a small store's search
    assert "budget_tokens" in second and "out of range" in second


def test_a_null_argument_is_refused_even_where_the_schema_has_no_type(workspace: Path) -> None:
    problems = compile_validator({"type": "object", "properties": {"ids": {}}})
    assert problems({"ids": None}) == ["argument 'ids' is null: omit it to use the default"]


def test_keys_that_are_not_strings_get_messages_not_an_exception() -> None:
    """Only a Python caller can pass them (JSON keys are strings); still a message, never a crash."""
    problems = compile_validator({"type": "object", "additionalProperties": False, "properties": {"a": {}}})
    assert problems({1: "x", "b": 2})
    assert problems({1: None, "b": None}) == [
        "argument '1' is null: omit it to use the default",
        "argument 'b' is null: omit it to use the default",
    ]
