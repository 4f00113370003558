"""The three memory servers the side-by-side eval (eval/peers.py) drives over MCP stdio.

Each is started the way its own README says, at a pinned version, with a private temp HOME
and data directory (nothing reads or writes a real config):

- **engram**: this checkout's `.venv/bin/engram-mcp --workspace DIR` on a git-less temp
  workspace. engram's writes go through a proposal a human approves (`engram_commit` needs
  their explicit consent), so the set is written as memory files into `.engram/memory/` (user
  scope: `$ENGRAM_HOME/memory/`) through engram's own renderer, the way a user's committed
  memories sit on disk. `ENGRAM_VECTORS` is passed through (or set per run). Searched with
  `engram_search` (limit 10); ids from `structuredContent.data.entries[].id`.
- **server-memory** (`@modelcontextprotocol/server-memory`, npm, the version bench/ pins):
  installed with `npm install --prefix build/eval/peers/server-memory`, run as `node <its
  bin>` with MEMORY_FILE_PATH on a temp file. Loaded with `create_entities` (name = memory id,
  entityType = type, observations = title, the body's paragraphs, the tags); searched with
  `search_nodes`, ranked in the order it returns. Its search is one case-insensitive substring
  match of the whole query against names, types and observations: a query of several words
  finds only an entity that holds them verbatim, in that order.
- **basic-memory** (PyPI, pinned below): its own venv at build/eval/peers/basic-memory-venv
  (its dependencies never touch .venv). Every release needs Python >= 3.12, so the venv is
  made with the first `python3.13`/`python3.12` found (PATH, then pyenv). Started as its
  README says, `basic-memory mcp`, with HOME, BASIC_MEMORY_CONFIG_DIR and BASIC_MEMORY_HOME
  (its project folder) in temp. Loaded with `write_note` (title = the memory's title,
  directory = its type, content = body, tags); ids come back through the permalink each write
  returns. Searched with `search_notes` (page_size 10). Its semantic half needs SQLite
  extension loading and a model fetched from a hub on first use; where either is missing it
  says "falling back to keyword-only" and searches with SQLite FTS5 alone (the row says so).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.peers_client import McpClient, PeerError, clean_env, result_text
from store.files.memory import render_checked

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "eval" / "peers"
ENGRAM_BIN = ROOT / ".venv" / "bin" / "engram-mcp"
SERVER_MEMORY = "@modelcontextprotocol/server-memory"
SERVER_MEMORY_VERSION = "2026.8.31"  # bench/sidebyside.py's pin
BASIC_MEMORY_VERSION = "0.24.1"  # the newest on PyPI (2026-10); needs Python >= 3.12
LIMIT = 10
STAMP = "2026-11-30T09:00:00Z"


@dataclass
class Opened:
    """A started, loaded server: `ask(text)` returns (ranked ids, the result text a model reads)."""

    client: McpClient
    version: str
    load_seconds: float
    ask: Callable[[str], tuple[list[str], str]]
    note: str = ""
    backends: set[str] = field(default_factory=set)  # engram's `backends_used`, every answer's


# --- result shapes -> memory ids (unit-tested on recorded payloads) ---


def engram_ids(result: dict[str, Any]) -> list[str]:
    data = (result.get("structuredContent") or {}).get("data") or {}
    return [str(e["id"]) for e in data.get("entries", [])]


def engram_backends(result: dict[str, Any]) -> list[str]:
    data = (result.get("structuredContent") or {}).get("data") or {}
    return [str(b) for b in data.get("backends_used", [])]


def server_memory_ids(result: dict[str, Any]) -> list[str]:
    found = (result.get("structuredContent") or {}).get("entities")
    if not isinstance(found, list):  # an older release: the graph as JSON text only
        found = json.loads(result_text(result) or "{}").get("entities", [])
    return [str(e["name"]) for e in found]


PERMALINK = re.compile(r"^permalink: (\S+)\s*$", re.MULTILINE)
RESULT_PERMALINK = re.compile(r"^- permalink: (\S+)\s*$", re.MULTILINE)


def basic_memory_permalink(write_result: dict[str, Any]) -> str:
    """The permalink `write_note` gave the note (its text reply's `permalink:` line)."""
    found = PERMALINK.search(result_text(write_result))
    if found is None:
        raise PeerError(f"write_note gave no permalink: {result_text(write_result)[:200]!r}")
    return found.group(1)


def basic_memory_ids(result: dict[str, Any], ids: dict[str, str]) -> list[str]:
    """`search_notes`' text results, mapped back through {permalink: memory id}; a permalink the
    eval did not write (none should appear) is kept as itself, so it counts as a miss."""
    ranked: list[str] = []
    for link in RESULT_PERMALINK.findall(result_text(result)):
        memory = ids.get(link, link)
        if memory not in ranked:
            ranked.append(memory)
    return ranked


# --- engram ---


def write_engram_files(memories: Sequence[dict[str, Any]], workspace: Path, home: Path) -> None:
    """The set as engram memory files, through engram's renderer (the files a commit writes)."""
    for memory in memories:
        scope = memory.get("scope", "project")
        folder = (home if scope == "user" else workspace / ".engram") / "memory"
        folder.mkdir(parents=True, exist_ok=True)
        meta = {
            "id": memory["id"],
            "type": memory["type"],
            "title": memory["title"],
            "scope": scope,
            "tags": list(memory.get("tags", [])),
            "always": bool(memory.get("always", False)),
            "status": memory.get("status", "active"),
            "supersedes": list(memory.get("supersedes", [])),
            "created": memory.get("created", STAMP),
            "updated": memory.get("updated", STAMP),
            "source": memory.get("source", "save"),
        }
        if memory.get("superseded_by"):
            meta["superseded_by"] = memory["superseded_by"]
        data = render_checked(meta, memory["body"], scope=scope, tier="durable")
        (folder / f"{memory['id']}.md").write_bytes(data)


def open_engram(memories: Sequence[dict[str, Any]], scratch: Path, vectors: str | None) -> Opened:
    if not ENGRAM_BIN.is_file():
        raise PeerError(f"{ENGRAM_BIN.relative_to(ROOT)} is missing (make install)")
    workspace, home = scratch / "workspace", scratch / "home"
    began = time.perf_counter()
    write_engram_files(memories, workspace, home)
    home.mkdir(parents=True, exist_ok=True)
    env = clean_env(HOME=str(home), ENGRAM_HOME=str(home))
    chosen = vectors if vectors is not None else os.environ.get("ENGRAM_VECTORS")
    if chosen is not None:
        env["ENGRAM_VECTORS"] = chosen
    client = McpClient(
        [str(ENGRAM_BIN), "--workspace", str(workspace)], env, workspace, scratch / "stderr.log"
    )
    backends: set[str] = set()
    try:
        client.initialize()
        warm = engram_backends(client.call("engram_search", {"query": "warm up", "limit": LIMIT}))
        deadline = time.monotonic() + 180
        while (
            chosen == "1" and not any(b.startswith("vectors") for b in warm) and time.monotonic() < deadline
        ):
            time.sleep(1)  # the vector index builds off the request path: wait until it answers
            warm = engram_backends(client.call("engram_search", {"query": "warm up", "limit": LIMIT}))
    except PeerError:
        client.close()
        raise
    load = time.perf_counter() - began

    def ask(text: str) -> tuple[list[str], str]:
        result = client.call("engram_search", {"query": text, "limit": LIMIT})
        backends.update(engram_backends(result))
        return engram_ids(result), result_text(result)

    return Opened(client, str(client.server_info.get("version", "?")), load, ask, backends=backends)


# --- server-memory ---


def install_server_memory(build: Path = BUILD) -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise PeerError("Node.js (node and npm) is not installed")
    prefix = build / "server-memory"
    script = prefix / "node_modules" / SERVER_MEMORY / "dist" / "index.js"
    if not script.is_file():
        prefix.mkdir(parents=True, exist_ok=True)
        spec = f"{SERVER_MEMORY}@{SERVER_MEMORY_VERSION}"
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), spec],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not script.is_file():
            raise PeerError(f"npm install {spec} failed: {done.stderr.strip()[-300:]}")
    return script


def entity(memory: dict[str, Any]) -> dict[str, Any]:
    paragraphs = [p.strip() for p in memory["body"].split("\n\n") if p.strip()]
    tags = list(memory.get("tags", []))
    observations = [memory["title"], *paragraphs] + ([f"tags: {', '.join(tags)}"] if tags else [])
    return {"name": memory["id"], "entityType": memory["type"], "observations": observations}


def open_server_memory(memories: Sequence[dict[str, Any]], scratch: Path, build: Path = BUILD) -> Opened:
    script = install_server_memory(build)
    scratch.mkdir(parents=True, exist_ok=True)
    graph = scratch / "memory.jsonl"
    env = clean_env(HOME=str(scratch), MEMORY_FILE_PATH=str(graph))
    began = time.perf_counter()
    client = McpClient(["node", str(script)], env, scratch, scratch / "stderr.log")
    try:
        client.initialize()
        for start in range(0, len(memories), 50):
            chunk = [entity(m) for m in memories[start : start + 50]]
            client.call("create_entities", {"entities": chunk})
    except PeerError:
        client.close()
        raise
    load = time.perf_counter() - began

    def ask(text: str) -> tuple[list[str], str]:
        result = client.call("search_nodes", {"query": text})
        return server_memory_ids(result), result_text(result)

    note = "search_nodes matches the whole query as one substring; it returns every match in full"
    return Opened(client, SERVER_MEMORY_VERSION, load, ask, note)


# --- basic-memory ---


def python_312() -> str:
    """A Python >= 3.12 interpreter to build basic-memory's venv with."""
    for name in ("python3.13", "python3.12"):
        found = shutil.which(name)
        if found and subprocess.run([found, "-V"], capture_output=True).returncode == 0:
            return found
    for versions in sorted((Path.home() / ".pyenv" / "versions").glob("3.1[2-9]*"), reverse=True):
        if (versions / "bin" / "python").is_file():
            return str(versions / "bin" / "python")
    raise PeerError("basic-memory needs Python >= 3.12; none found (PATH, pyenv)")


def install_basic_memory(build: Path = BUILD) -> Path:
    venv = build / "basic-memory-venv"
    entry = venv / "bin" / "basic-memory"
    pin = venv / "pinned.txt"
    if entry.is_file() and pin.is_file() and pin.read_text().strip() == BASIC_MEMORY_VERSION:
        return entry
    if not (venv / "bin" / "pip").is_file():
        made = subprocess.run([python_312(), "-m", "venv", str(venv)], capture_output=True, text=True)
        if made.returncode != 0:
            raise PeerError(f"cannot make basic-memory's venv: {made.stderr.strip()[-300:]}")
    done = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", f"basic-memory=={BASIC_MEMORY_VERSION}"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not entry.is_file():
        raise PeerError(
            f"pip install basic-memory=={BASIC_MEMORY_VERSION} failed: {done.stderr.strip()[-300:]}"
        )
    pin.write_text(BASIC_MEMORY_VERSION + "\n")
    return entry


def open_basic_memory(memories: Sequence[dict[str, Any]], scratch: Path, build: Path = BUILD) -> Opened:
    entry = install_basic_memory(build)
    home, notes = scratch / "home", scratch / "notes"
    home.mkdir(parents=True, exist_ok=True)
    notes.mkdir(parents=True, exist_ok=True)
    config = home / ".basic-memory"
    env = clean_env(
        HOME=str(home),
        BASIC_MEMORY_CONFIG_DIR=str(config),
        BASIC_MEMORY_HOME=str(notes),
        HF_HUB_OFFLINE="1",  # the network is not there: fail fast instead of retrying a hub
    )
    began = time.perf_counter()
    client = McpClient([str(entry), "mcp"], env, scratch, scratch / "stderr.log", timeout=300)
    ids: dict[str, str] = {}
    try:
        client.initialize()
        for memory in memories:
            arguments = {
                "title": memory["title"],
                "directory": memory["type"],
                "content": memory["body"],
                "tags": list(memory.get("tags", [])),
            }
            try:
                written = client.call("write_note", arguments)
            except PeerError:  # a title that collides: make it unique with the id
                written = client.call(
                    "write_note", {**arguments, "title": f"{memory['title']} ({memory['id']})"}
                )
            ids[basic_memory_permalink(written)] = memory["id"]
        wait_indexed(client, memories[-1]["title"] if memories else "")
    except PeerError:
        client.close()
        raise
    load = time.perf_counter() - began
    log = config / "basic-memory.log"
    keyword_only = log.is_file() and "keyword-only" in log.read_text(encoding="utf-8", errors="replace")

    def ask(text: str) -> tuple[list[str], str]:
        result = client.call("search_notes", {"query": text, "page_size": LIMIT})
        return basic_memory_ids(result, ids), result_text(result)

    off = "semantic search off (it fell back to keyword-only FTS5); " if keyword_only else ""
    note = off + "its reply names titles and permalinks, no body"
    return Opened(client, BASIC_MEMORY_VERSION, load, ask, note)


def wait_indexed(client: McpClient, title: str, seconds: float = 120.0) -> None:
    """Until a search finds the last note written (its index may lag the writes)."""
    deadline = time.monotonic() + seconds
    while title:
        try:
            found = RESULT_PERMALINK.search(result_text(client.call("search_notes", {"query": title})))
        except PeerError:
            return  # a title its query syntax refuses: the queries themselves will tell
        if found or time.monotonic() > deadline:
            return
        time.sleep(0.5)
