"""What a start-up imports (issue 20): the handshake of either era and the session hook, on a
fresh 10-memory store, load none of numpy, jsonschema, yaml, watchdog or the vector stack.

Each is a heavy import (35-175 ms) kept behind a named seam (CONTRIBUTING.md): numpy for large
stores' BM25 and vectors, jsonschema for arguments the exact check cannot vouch for and for a
config file not checked before, yaml for front matter outside the one-line form and for
writes, watchdog for the change watch. The real programs run as a host starts them, with
`PYTHONPROFILEIMPORTTIME=1` (the environment's `-X importtime`): every module the process
imported is written to its stderr, in the order the imports finished, so nothing in the
product has to report on itself.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from protocol.eras import META_CAPABILITIES, META_VERSION, MODERN_VERSIONS
from tests.support.paths import ENGRAM, ENGRAM_MCP

HEAVY: Final = (
    "numpy",
    "jsonschema",
    "yaml",
    "_yaml",
    "watchdog",
    "tokenizers",
    "safetensors",
    "wordllama",
    "onnxruntime",
)
"""Top-level packages a start-up must not import."""
VECTORS_MODULE: Final = "store.search.vectors"
APPLICATION_SEAM: Final = "engram_mcp.mcp.app"
"""The module `engram-mcp` imports after its first reply (engram_mcp.mcp.server, `Application.load`)."""

INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MODERN_META: Final = {META_VERSION: MODERN_VERSIONS[0], META_CAPABILITIES: {}}
DISCOVER: Final = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}}
SEARCH: Final = {"name": "engram_search", "arguments": {"query": "how do I deploy"}}
FIRST_SEARCH: Final = {
    "initialize": [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": SEARCH},
    ],
    "server/discover": [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {**SEARCH, "_meta": MODERN_META}},
    ],
}
"""What a client sends after each era's first request to search once."""


def _memory(n: int) -> str:
    return (
        f"---\nid: deploy-step-{n}\ntype: procedure\ntitle: Deploy step {n} runs through make deploy\n"
        "scope: project\ntags: [deploy, ci]\nalways: false\nstatus: active\nsupersedes: []\n"
        "created: 2026-10-01T10:00:00Z\nupdated: 2026-10-01T10:00:00Z\nsource: save\n---\n"
        f"Step {n} of the deploy: run `make deploy STEP={n}` from the repository root.\n"
    )


@pytest.fixture
def ten_memories(tmp_path: Path) -> Path:
    """A workspace with 10 memories in the form engram writes, and no index yet."""
    workspace = tmp_path / "ten"
    memory = workspace / ".engram" / "memory"
    memory.mkdir(parents=True)
    for n in range(10):
        (memory / f"deploy-step-{n}.md").write_text(_memory(n), encoding="utf-8")
    return workspace


def imported(stderr: str) -> list[tuple[int, str]]:
    """(nesting depth, module) for every import the process finished, in order, from
    `-X importtime`'s lines (`import time: self | cumulative | <two spaces a level>name`)."""
    found = []
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1]
            stripped = name.lstrip(" ")
            if stripped and stripped != "imported package":
                found.append(((len(name) - len(stripped) - 1) // 2, stripped))
    return found


def heavy(modules: list[str]) -> list[str]:
    return sorted({m for m in modules if m.split(".")[0] in HEAVY or m == VECTORS_MODULE})


def _environment(vectors: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "ENGRAM_SESSION_OBJECTIVE": "deploy the service"}
    if vectors == "on":  # the configuration's default: on when the extra is installed
        env.pop("ENGRAM_VECTORS", None)
    return env


def _serve(workspace: Path, requests: list[dict[str, Any]], env: dict[str, str], stderr: Path) -> list[Any]:
    """Start `engram-mcp` as a host does, send `requests`, close stdin; the results, in order."""
    with stderr.open("wb") as errors:
        done = subprocess.run(
            [ENGRAM_MCP],
            cwd=workspace,
            env=env,
            input=b"".join(json.dumps(request).encode() + b"\n" for request in requests),
            stdout=subprocess.PIPE,
            stderr=errors,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, stderr.read_text("utf-8")[-2000:]
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply.get("id") for reply in replies] == [r["id"] for r in requests if "id" in r], replies
    assert all("result" in reply for reply in replies), replies
    return [reply["result"] for reply in replies]


@pytest.mark.parametrize("request_", [INITIALIZE, DISCOVER], ids=["initialize", "server-discover"])
def test_the_handshake_and_a_first_search_import_nothing_heavy(
    ten_memories: Path, tmp_path: Path, request_: dict[str, Any]
) -> None:
    """engram's own rule: with the vector signal off (the suite's setting), neither era's first
    request, nor the application loaded after it, nor a first search on the fresh store (its
    index built from the files) imports a heavy library in the whole life of the process."""
    log = tmp_path / "stderr.txt"
    results = _serve(ten_memories, [request_, *FIRST_SEARCH[request_["method"]]], _environment("off"), log)
    assert "deploy-step-" in json.dumps(results[-1])  # the search found the memories
    modules = [name for _, name in imported(log.read_text("utf-8"))]
    assert APPLICATION_SEAM in modules  # the application was loaded, so its imports were seen
    assert heavy(modules) == []


@pytest.mark.parametrize("request_", [INITIALIZE, DISCOVER], ids=["initialize", "server-discover"])
def test_with_vectors_on_the_application_loads_before_the_vector_stack(
    ten_memories: Path, tmp_path: Path, request_: dict[str, Any]
) -> None:
    """engram's own rule: with the vector signal on (the default when the extra is installed),
    the first reply and the whole application are imported before anything heavy; only the
    warm-up thread, started after both, loads the vector stack (for the first search). The
    imports up to the application seam are the reader thread's alone, so the cut is exact."""
    log = tmp_path / "stderr.txt"
    _serve(ten_memories, [request_], _environment("on"), log)
    found = imported(log.read_text("utf-8"))
    seam = next(i for i, (depth, name) in enumerate(found) if depth == 0 and name == APPLICATION_SEAM)
    assert heavy([name for _, name in found[: seam + 1]]) == []


@pytest.mark.parametrize("vectors", ["off", "on"])
def test_the_session_hook_imports_nothing_heavy(ten_memories: Path, tmp_path: Path, vectors: str) -> None:
    """engram's own rule: `engram hook session-start` (run at every session start of a host)
    routes the objective and prints its load from a fresh 10-memory store without a heavy import."""
    done = subprocess.run(
        [ENGRAM, "hook", "session-start"],
        cwd=ten_memories,
        env=_environment(vectors),
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert b"engram: loaded 10 memories" in done.stdout, done.stdout[-500:]
    modules = [name for _, name in imported(done.stderr.decode("utf-8", "replace"))]
    assert "store.store" in modules
    assert heavy(modules) == []


def test_the_import_log_is_read_as_python_writes_it() -> None:
    """The check itself: depths and names from `-X importtime`'s format, header skipped."""
    stderr = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       120 |        120 |     numpy._utils\n"
        "import time:      5263 |      97727 |   numpy\n"
        "engram-mcp WARNING something else on stderr\n"
        "import time:      4713 |     107730 | store.search.vectors\n"
    )
    assert imported(stderr) == [(2, "numpy._utils"), (1, "numpy"), (0, "store.search.vectors")]
    assert heavy([name for _, name in imported(stderr)]) == ["numpy", "numpy._utils", "store.search.vectors"]
