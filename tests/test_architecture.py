"""Layering (SPEC §1): protocol and store import neither each other nor engram_mcp."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"protocol": {"store", "engram_mcp", "mcp"}, "store": {"protocol", "engram_mcp", "mcp"}}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_nothing_above_or_beside_it(package: str) -> None:
    """Spec-mandated: each layer can be tested alone."""
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imports(path) & FORBIDDEN[package])
        for path in sorted((ROOT / package).rglob("*.py"))
        if _imports(path) & FORBIDDEN[package]
    }
    assert offenders == {}


def test_no_runtime_module_imports_the_mcp_sdk() -> None:
    """Spec-mandated: the MCP SDK is a test dependency only."""
    offenders = [
        str(p.relative_to(ROOT))
        for package in ("engram_mcp", "protocol", "store")
        for p in (ROOT / package).rglob("*.py")
        if "mcp" in _imports(p)
    ]
    assert offenders == []
