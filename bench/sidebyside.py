"""The official reference memory server (`@modelcontextprotocol/server-memory`, npm) on the same data.

It keeps a knowledge graph in a JSON-lines file and answers `search_nodes` by substring match.
Each memory becomes one entity (name = id, observations = title and body). Skipped, with a
note, when Node.js/npx is not available or the package cannot be fetched.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any


def compare(workspace: Path, queries: list[str], repeat: int) -> dict[str, Any]:
    npx = shutil.which("npx")
    if npx is None:
        return {"skipped": "Node.js (npx) is not installed"}
    entities = []
    for path in sorted((workspace / ".engram" / "memory").glob("*.md")):
        text = path.read_text()
        title = next((line[7:] for line in text.splitlines() if line.startswith("title: ")), path.stem)
        body = text.split("\n---\n", 1)[-1]
        entities.append({"name": path.stem, "entityType": "memory", "observations": [title, body]})
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "MEMORY_FILE_PATH": str(Path(scratch) / "memory.jsonl")}
        try:
            proc = subprocess.Popen(
                [npx, "-y", "@modelcontextprotocol/server-memory"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=scratch,
            )
        except OSError as exc:
            return {"skipped": f"cannot start npx: {exc}"}
        assert proc.stdin and proc.stdout
        counter = iter(range(1, 1_000_000))

        def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
            assert proc.stdin and proc.stdout
            message = {"jsonrpc": "2.0", "id": next(counter), "method": method, "params": params}
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            while True:
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError("server-memory exited")
                reply: dict[str, Any] = json.loads(line)
                if "id" in reply:
                    return reply

        try:
            request(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"},
                },
            )
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            proc.stdin.flush()
            for start in range(0, len(entities), 200):
                request(
                    "tools/call",
                    {"name": "create_entities", "arguments": {"entities": entities[start : start + 200]}},
                )
            samples = []
            for n in range(repeat * 2):
                began = time.perf_counter()
                request(
                    "tools/call",
                    {"name": "search_nodes", "arguments": {"query": queries[n % len(queries)].split()[0]}},
                )
                samples.append((time.perf_counter() - began) * 1000)
        except (RuntimeError, OSError, ValueError) as exc:
            proc.kill()
            proc.wait()
            return {"skipped": f"server-memory failed: {exc}"}
        proc.stdin.close()
        proc.wait(timeout=30)
    return {"server_memory_search_median_ms": round(statistics.median(samples), 2), "memories": len(entities)}
