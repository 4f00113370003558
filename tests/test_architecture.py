"""Layering (SPEC §1, CONTRIBUTING.md): which component may import which, and no import cycles.

Every import counts, wherever it is written: at the top, inside a function (a lazy import is
still an import), or under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
import builtins
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engram_mcp", "protocol", "store")
FORBIDDEN = {"protocol": {"store", "engram_mcp", "mcp"}, "store": {"protocol", "engram_mcp", "mcp"}}
HOSTS = "engram_mcp.hosts"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


@functools.cache
def _imported(path: Path) -> tuple[str, ...]:
    """Every module name an import statement in `path` names (relative imports resolved)."""
    return tuple(_names(path))


def _names(path: Path) -> Iterator[str]:
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _imports(path: Path) -> set[str]:
    """The top-level packages `path` imports."""
    return {name.split(".")[0] for name in _imported(path) if name}


def import_graph() -> dict[str, set[str]]:
    """Module → the modules of this project it imports (only names that are modules)."""
    return {
        name: {target for target in _imported(path) if target in MODULES and target != name}
        for name, path in MODULES.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycles_in_store_protocol_or_engram_mcp() -> None:
    """engram's own rule: two modules that need each other share a third module instead."""
    assert cycles(import_graph()) == []


def test_the_cycle_finder_sees_a_lazy_cycle() -> None:
    """The check itself: a cycle closed by a function-level import is reported."""
    graph = {"store.a": {"store.b"}, "store.b": {"store.c"}, "store.c": {"store.a"}, "store.d": {"store.a"}}
    assert cycles(graph) == [["store.a", "store.b", "store.c"]]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_nothing_above_or_beside_it(package: str) -> None:
    """Spec-mandated: each layer can be tested alone."""
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imports(path) & FORBIDDEN[package])
        for path in sorted((ROOT / package).rglob("*.py"))
        if _imports(path) & FORBIDDEN[package]
    }
    assert offenders == {}


LEAVES = ("engram_mcp.platform",)


def test_the_platform_module_is_a_leaf() -> None:
    """engram_mcp/platform.py may be imported from anywhere in engram_mcp because it imports
    nothing of engram's own."""
    assert {t for t in _imported(MODULES["engram_mcp.platform"]) if t.split(".")[0] in FORBIDDEN} == set()


def test_hosts_is_a_component_of_its_own() -> None:
    """engram's own rule: host-config linking (used by the CLI) imports neither the protocol nor
    the server, app, tools or ops modules; it may use store's atomic writes and the platform
    leaf (engram_mcp/platform.py, which imports nothing of engram's)."""
    offenders = {
        name: sorted(
            target
            for target in _imported(path)
            if target.split(".")[0] == "protocol"
            or (
                target.startswith("engram_mcp")
                and not target.startswith((HOSTS, *LEAVES))
                and target != "engram_mcp"
            )
        )
        for name, path in MODULES.items()
        if name.startswith(HOSTS)
    }
    assert {name: found for name, found in offenders.items() if found} == {}


SURFACES = {
    "engram_mcp.ui": ("engram_mcp.cli",),
    "engram_mcp.ops": ("engram_mcp.cli", "engram_mcp.ui", "engram_mcp.mcp.tools", "engram_mcp.mcp.server"),
    "engram_mcp.mcp.tools": ("engram_mcp.cli", "engram_mcp.ui", "engram_mcp.mcp.server"),
}
"""What each part of engram_mcp may not import: the CLI sits on top (it starts the review page
and the server); the page, the tools and the operations they share sit below it, and what two
surfaces share lives in ops/."""


def test_no_surface_reaches_back_up_to_another() -> None:
    offenders = {
        name: sorted(t for t in _imported(path) if t.startswith(SURFACES[part]))
        for part in SURFACES
        for name, path in MODULES.items()
        if name == part or name.startswith(part + ".")
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_no_runtime_module_imports_the_mcp_sdk() -> None:
    """Spec-mandated: the MCP SDK is a test dependency only."""
    offenders = [
        str(p.relative_to(ROOT))
        for package in PACKAGES
        for p in (ROOT / package).rglob("*.py")
        if "mcp" in _imports(p)
    ]
    assert offenders == []


def _reach(start: str, graph: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


READ_FACADE = ("store.store", "store.finder", "store.loading")


def test_the_read_path_and_search_never_reach_the_write_path() -> None:
    """CONTRIBUTING's map: reading, searching and ranking memory cannot write it. No module of
    store/read/ or store/search/, nor the read facade (store.store, its search side and its
    loading), imports store/write/, directly or through another module."""
    graph = import_graph()
    offenders = {
        name: sorted(target for target in _reach(name, graph) if target.startswith("store.write"))
        for name in MODULES
        if name.startswith(("store.read", "store.search")) or name in READ_FACADE
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_no_two_product_modules_share_a_name() -> None:
    """A name says which module it is: `git.py` and `gitsync.py`, or two `server.py`, made
    readers open the wrong one. Each package's error tree is its `errors.py`."""
    shared = {"__init__", "__main__", "errors"}
    seen: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        if path.stem not in shared:
            seen.setdefault(path.stem, []).append(name)
    assert {stem: names for stem, names in seen.items() if len(names) > 1} == {}


ERROR_TREES = ("engram_mcp/errors.py", "engram_mcp/hosts/errors.py", "protocol/errors.py", "store/errors.py")
"""Where the product's exception classes live: one tree per component, each drawn in its docstring."""
_BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)


def exception_classes(sources: dict[str, str]) -> dict[str, set[str]]:
    """File → the classes it defines that derive from BaseException, by AST: a base that is a
    built-in exception, a class of `sources` found to be one (to a fixed point), or a name
    from another library that is spelled like one (`yaml.YAMLError`, `subprocess.TimeoutExpired`
    are caught by their suffix or module attribute)."""
    defined = {
        file: [node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.ClassDef)]
        for file, text in sources.items()
    }
    known = set(_BUILTIN_EXCEPTIONS)

    def is_exception(base: ast.expr) -> bool:
        name = ast.unparse(base).rpartition(".")[2]
        foreign = isinstance(base, ast.Attribute)
        return name in known or (foreign and name.endswith(("Error", "Exception", "Exit", "Expired")))

    changed = True
    while changed:
        changed = False
        for classes in defined.values():
            for node in classes:
                if node.name not in known and any(is_exception(base) for base in node.bases):
                    known.add(node.name)
                    changed = True
    return {
        file: found
        for file, classes in defined.items()
        if (found := {node.name for node in classes if any(is_exception(base) for base in node.bases)})
    }


def test_the_exception_finder_sees_every_kind_of_base() -> None:
    """The check itself: built-in bases, another library's, and subclasses of both, anywhere."""
    source = (
        "import yaml\nclass A(ValueError): pass\nclass B(A): pass\nclass C(yaml.YAMLError): pass\n"
        "def f():\n    class D(C): pass\nclass E: pass\nclass F(E): pass\n"
    )
    assert exception_classes({"m.py": source}) == {"m.py": {"A", "B", "C", "D"}}


@functools.cache
def _product_exceptions() -> dict[str, set[str]]:
    return exception_classes(
        {str(path.relative_to(ROOT)): path.read_text("utf-8") for path in MODULES.values()}
    )


def test_every_exception_class_is_in_an_error_tree() -> None:
    """engram's own rule: a reader finds every error of a component in its `errors.py`, drawn
    in that file's docstring, and none is defined twice."""
    outside = {file: found for file, found in _product_exceptions().items() if file not in ERROR_TREES}
    assert {file: found for file, found in outside.items() if found} == {}


def test_no_two_exception_classes_share_a_name() -> None:
    """Two `Refused` with different codes made a reader guess which one a handler catches."""
    seen: dict[str, list[str]] = {}
    for file, names in _product_exceptions().items():
        for name in names:
            seen.setdefault(name, []).append(file)
    assert {name: files for name, files in seen.items() if len(files) > 1} == {}


MAX_SEAMS = 12
"""Function-level imports the product may hold: each one a named seam (CONTRIBUTING.md)."""


def function_imports(source: str) -> list[tuple[int, str]]:
    """(line, the statement's seam comment or "") of every import inside a function, by AST: the
    comment is `# seam: ...` at the end of one of the statement's lines, or on the line above."""
    lines = ["", *source.splitlines()]  # 1-based, as ast numbers them
    found: dict[int, str] = {}
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno not in found:
                above = lines[node.lineno - 1].strip()
                statement = lines[node.lineno : (node.end_lineno or node.lineno) + 1]
                comments = [line[line.find("# seam:") :] for line in statement if "# seam:" in line]
                if above.startswith("# seam:"):  # a comment line of its own, not another import's
                    comments.insert(0, above)
                found[node.lineno] = comments[0].strip() if comments else ""
    return sorted(found.items())


def test_the_seam_finder_sees_nested_imports_and_their_comments() -> None:
    """The check itself: an import in a method or a nested function counts; its comment is read
    from the end of its line or the line above; a top-level import does not count."""
    source = (
        "import os\n"
        "class A:\n"
        "    def f(self):\n"
        "        import yaml  # seam: yaml, for writes\n"
        "        def g():\n"
        "            # seam: numpy, for big stores\n"
        "            from numpy import (\n"
        "                array,\n"
        "            )\n"
        "        import json\n"
        "        import csv  # seam: csv, for exports\n"
        "        import io\n"
    )
    assert function_imports(source) == [
        (4, "# seam: yaml, for writes"),
        (7, "# seam: numpy, for big stores"),
        (10, ""),
        (11, "# seam: csv, for exports"),
        (12, ""),
    ]


def test_function_level_imports_are_few_and_each_is_a_named_seam() -> None:
    """engram's own rule (issue 20): a heavy library is imported at the top of the module that
    needs it, and that module is deferred at one call site with a `# seam:` comment saying what
    it defers; our own light modules are imported at the top. CONTRIBUTING.md lists the seams."""
    seams = {
        f"{path.relative_to(ROOT)}:{line}": seam
        for path in MODULES.values()
        for line, seam in function_imports(path.read_text("utf-8"))
    }
    assert {where: seam for where, seam in seams.items() if not seam} == {}
    assert len(seams) <= MAX_SEAMS, "\n".join(f"{where} {seam}" for where, seam in sorted(seams.items()))


CROSS_CUTTING = {
    "support": "helpers the suites share, no tests",
    "process": "the real engram and engram-mcp processes: signals, crashes, concurrency",
    "browser": "the review page in Chromium",
    "platform": "what differs between operating systems, across the tree",
    "regressions": "re-creations of attacks that cross layers",
}
"""Test folders that follow a kind of test rather than a source folder, each with its reason."""


def test_every_test_folder_mirrors_a_source_folder() -> None:
    """tests/<name> tests engram_mcp/<name>, or the top-level package <name> (protocol, store,
    eval), or is one of the declared cross-cutting suites."""
    tests = ROOT / "tests"
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"}
    sources = {p.name for p in (ROOT / "engram_mcp").iterdir() if (p / "__init__.py").is_file()}
    sources |= {name for name in ("protocol", "store", "eval", "bench") if (ROOT / name).is_dir()}
    assert folders - sources - set(CROSS_CUTTING) == set()


def _folder(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def test_no_two_store_folders_import_each_other() -> None:
    """store/'s folders form layers: when one imports another, the other never imports it back
    (the root's modules, errors and config, are below them all)."""
    edges = {
        (_folder(a), _folder(b))
        for a, targets in import_graph().items()
        for b in targets
        if a.startswith("store.") and b.startswith("store.") and _folder(a) != _folder(b)
    }
    inner = {(a, b) for a, b in edges if a != "store" and b != "store"}
    assert sorted((a, b) for a, b in inner if (b, a) in inner and a < b) == []


def test_the_wheel_lists_every_package() -> None:
    """pyproject.toml names the packages a wheel holds: a folder of modules missing from the
    list works in the editable checkout and is absent from `pip install .`."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["packages"]
    )
    folders = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for package in PACKAGES
        for p in (ROOT / package).rglob("*.py")
    }
    assert folders - listed == set()
