"""The store knows no MCP (CONTRIBUTING): no text it makes names a tool or a resource. A next
step it names is a value (store.errors.Next) that each surface words, and every kind it uses
has words on both surfaces (tests/ops/test_hint_wording.py)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from engram_mcp.mcp.tools import DECLARED
from engram_mcp.ops.outcome import HINT_KINDS
from tests.support.paths import REPO as ROOT

STORE = ROOT / "store"
TOOL_NAMES = re.compile("|".join(sorted((re.escape(d.name) for d in DECLARED), key=len, reverse=True)))
RESOURCE = "engram://"
ALLOWED: set[tuple[str, str]] = set()
"""(file, function) whose strings may name tools: none."""


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes: documentation may name a tool; text the store makes may not."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            for n, statement in enumerate(body):
                first = n == 0
                follows_assign = n > 0 and isinstance(body[n - 1], (ast.Assign, ast.AnnAssign))
                if (
                    (first or follows_assign)
                    and isinstance(statement, ast.Expr)
                    and isinstance(statement.value, ast.Constant)
                    and isinstance(statement.value.value, str)
                ):
                    found.add(id(statement.value))
    return found


def _strings(path: Path) -> Iterator[tuple[str, int, str]]:
    """(enclosing function, line, text) of every string constant in `path` but docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _docstrings(tree)
    relative = path.relative_to(ROOT).as_posix()

    def walk(node: ast.AST, function: str) -> Iterator[tuple[str, int, str]]:
        for child in ast.iter_child_nodes(node):
            inside = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if (relative, inside) in ALLOWED:
                continue
            if isinstance(child, ast.Constant) and isinstance(child.value, str) and id(child) not in skipped:
                yield inside, child.lineno, child.value
            yield from walk(child, inside)

    yield from walk(tree, "")


def test_no_string_in_the_store_names_a_tool_or_a_resource() -> None:
    named = [
        f"{path.relative_to(ROOT)}:{line} ({function or 'module'}): {text[:80]!r}"
        for path in sorted(STORE.rglob("*.py"))
        for function, line, text in _strings(path)
        if TOOL_NAMES.search(text) or RESOURCE in text
    ]
    assert named == []


def test_the_check_sees_a_tool_name_where_one_is() -> None:
    """The test above is not vacuous: the tools' own wording module names them all over."""
    wording = ROOT / "engram_mcp" / "ops" / "wording.py"
    assert any(TOOL_NAMES.search(text) for _, _, text in _strings(wording))


def test_every_step_the_store_names_has_a_kind_both_surfaces_word() -> None:
    used = {
        node.args[0].value
        for path in STORE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "Next"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
    assert used and used <= set(HINT_KINDS)
