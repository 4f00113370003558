"""The official reference memory server (`@modelcontextprotocol/server-memory`, npm) on the same data.

It keeps a knowledge graph in a JSON-lines file, reads the whole file on every tool call and
answers `search_nodes` by substring match. Each project memory becomes one entity (name = id,
observations = title and body), written straight into its file. The package is installed once
with npm into build/bench/peer (pinned below) and run as `node <its bin>`, the way a host
starts it once npx has cached it (npx itself adds ~0.5 s of resolution to every start, which
would flatter engram). Skipped, with a note, when Node.js/npm is not there or the install fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PACKAGE = "@modelcontextprotocol/server-memory"
VERSION = "2026.8.31"
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


def install(build: Path) -> Path | str:
    """The peer's entry script, installed under build/peer; or why it cannot be had."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "Node.js (node and npm) is not installed"
    prefix = build / "peer"
    script = prefix / "node_modules" / PACKAGE / "dist" / "index.js"
    if not script.is_file():
        prefix.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), f"{PACKAGE}@{VERSION}"],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not script.is_file():
            return f"npm install {PACKAGE}@{VERSION} failed: {done.stderr.strip()[-300:]}"
    return script


def write_graph(workspace: Path, path: Path) -> int:
    """The workspace's project memories as the peer's JSON-lines graph; the entity count."""
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for memory in sorted((workspace / ".engram" / "memory").glob("*.md")):
            text = memory.read_text()
            title = next((line[7:] for line in text.splitlines() if line.startswith("title: ")), memory.stem)
            body = text.split("\n---\n", 1)[-1]
            entity = {
                "type": "entity",
                "name": memory.stem,
                "entityType": "memory",
                "observations": [title, body],
            }
            out.write(json.dumps(entity) + "\n")
            count += 1
    return count


class Peer:
    """One server-memory process; `started` is when it was spawned."""

    def __init__(self, script: Path, graph: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            ["node", str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "MEMORY_FILE_PATH": str(graph)},
            cwd=graph.parent,
        )
        self.ids = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server-memory exited")
            reply: dict[str, Any] = json.loads(line)
            if reply.get("id") == self.ids:
                return reply

    def initialize(self) -> None:
        assert self.proc.stdin
        self.request("initialize", INIT)
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def search(self, query: str) -> int:
        """Entities found for `query`; the bench refuses a figure for a search that finds none."""
        reply = self.request("tools/call", {"name": "search_nodes", "arguments": {"query": query}})
        found = (reply.get("result", {}).get("structuredContent") or {}).get("entities")
        return len(found) if isinstance(found, list) else 0

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def measure(
    script: Path, workspace: Path, scratch: Path, query: str, queries: list[str], repeat: int
) -> dict[str, Any]:
    """The peer's cold and warm figures on this workspace's memories, in milliseconds."""
    graph = scratch / f"peer-{workspace.name}.jsonl"
    memories = write_graph(workspace, graph)
    hits: dict[str, int] = {}
    init: list[float] = []
    first: list[float] = []
    for _ in range(repeat):
        peer = Peer(script, graph)
        peer.initialize()
        init.append((time.perf_counter() - peer.started) * 1000)
        hits[query] = min(hits.get(query, 10**9), peer.search(query))
        first.append((time.perf_counter() - peer.started) * 1000)
        peer.close()
    peer = Peer(script, graph)
    peer.initialize()
    warm: list[float] = []
    for n in range(repeat * 2):
        word = queries[n % len(queries)].split()[0]  # a substring match: one word
        began = time.perf_counter()
        hits[word] = min(hits.get(word, 10**9), peer.search(word))
        warm.append((time.perf_counter() - began) * 1000)
    peer.close()
    return {"memories": memories, "init": init, "first": first, "warm": warm, "hits": hits}


def compare(
    build: Path, workspace: Path, query: str, queries: list[str], repeat: int, summary: Callable[..., Any]
) -> dict[str, Any]:
    """The peer's figures (as `summary` shapes them), or {"skipped": why}."""
    found = install(build)
    if isinstance(found, str):
        return {"skipped": found}
    try:
        raw = measure(found, workspace, build, query, queries, repeat)
    except (RuntimeError, OSError, ValueError) as exc:
        return {"skipped": f"server-memory failed: {exc}"}
    return {
        "memories": raw["memories"],
        "spawn_to_initialize": summary(raw["init"]),
        "spawn_to_first_search": summary(raw["first"]),
        "search_warm": summary(raw["warm"]),
        "search_hits": raw["hits"],
    }
