"""`make bench`: engram's speed and memory figures, next to the bare interpreter start.

Drives the real `engram-mcp` over stdio and the real `engram` CLI on synthetic stores of 1k,
10k and 100k memories (`--quick`: 1k and 10k, fewer repeats; under a minute once the stores
exist). Prints a table and writes the medians and p95s to bench/results.json (or --out).
Stores are generated once under $ENGRAM_BENCH_DIR (default /tmp/engram-bench) and reused.

A search that finds nothing is not a speed: every timed search's hits are counted per query
(`search_hits`), and a query with no hit at any size is listed under `failures` and makes
the run exit 1 (after the figures are printed and written).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import sidebyside, stores  # noqa: E402

BIN = Path(sys.executable).parent
SERVER = str(BIN / "engram-mcp")
CLI = str(BIN / "engram")
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


class Session:
    def __init__(self, workspace: Path) -> None:
        env = {**os.environ, "ENGRAM_HOME": str(workspace / "home")}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [SERVER],
            cwd=workspace,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.ids = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params or {}}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return reply

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"median_ms": round(statistics.median(ordered), 2), "p95_ms": round(p95, 2), "runs": len(ordered)}


def prime(workspace: Path) -> None:
    """Index a new store once (as `engram status` would), so runs measure a store in use."""
    from store.store import Store

    store = Store(workspace, env={**os.environ, "ENGRAM_HOME": str(workspace / "home")})
    store.search("prime")
    store.close()


def cold_start(workspace: Path, method: str, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        session = Session(workspace)
        params = INIT if method == "initialize" else {"_meta": MODERN}
        session.request(method, params)
        samples.append((time.perf_counter() - session.started) * 1000)
        session.close()
    return samples


FIRST_QUERY = "migration retry"


def hit_count(reply: dict[str, Any]) -> int:
    """Results of an engram_search reply; an error or a malformed reply counts as none."""
    structured = reply.get("result", {}).get("structuredContent") or {}
    entries = (structured.get("data") or {}).get("entries") if structured.get("ok") else None
    return len(entries) if isinstance(entries, list) else 0


def first_search(workspace: Path, repeat: int, hits: dict[str, int]) -> list[float]:
    samples = []
    for _ in range(repeat):
        session = Session(workspace)
        session.request("initialize", INIT)
        start = time.perf_counter()
        reply = session.call("engram_search", {"query": FIRST_QUERY})
        samples.append((time.perf_counter() - start) * 1000)
        hits[FIRST_QUERY] = min(hits.get(FIRST_QUERY, 10**9), hit_count(reply))
        session.close()
    return samples


def warm(workspace: Path, repeat: int, hits: dict[str, int]) -> tuple[dict[str, list[float]], float]:
    """Warm figures; `hits` gets each query's result count (the smallest seen)."""
    session = Session(workspace)
    session.request("initialize", INIT)
    queries = stores.queries()
    session.call("engram_search", {"query": queries[0]})
    session.call("engram_load", {"query": queries[0]})
    results: dict[str, list[float]] = {
        "tools_list": timed(lambda: session.request("tools/list"), repeat * 2),
        "search": [],
        "load": [],
    }
    for n in range(repeat):
        query = queries[n % len(queries)]
        start = time.perf_counter()
        reply = session.call("engram_search", {"query": query})
        results["search"].append((time.perf_counter() - start) * 1000)
        hits[query] = min(hits.get(query, 10**9), hit_count(reply))
        results["load"] += timed(
            lambda q=query: session.call("engram_load", {"query": q, "budget_tokens": 2000}), 1
        )  # type: ignore[misc]
    rss = session.peak_rss_mb()
    session.close()
    return results, rss


def hook(workspace: Path, repeat: int) -> list[float]:
    env = {**os.environ, "ENGRAM_HOME": str(workspace / "home")}
    return timed(
        lambda: subprocess.run(
            [CLI, "hook", "session-start"],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
        ),
        repeat,
    )


def reindex_one(workspace: Path, repeat: int) -> list[float]:
    """In-process: a warm store, one memory rewritten the way engram writes (rename), then a search."""
    from store.fsutil import write_atomic
    from store.store import Store

    store = Store(workspace, env={**os.environ, "ENGRAM_HOME": str(workspace / "home")}, read_only=True)
    store.search("warm up")
    target = sorted((workspace / ".engram" / "memory").glob("*.md"))[0]
    original = target.read_bytes()
    samples = []
    for n in range(repeat):
        write_atomic(target, original + f"\nedit {n}\n".encode())
        start = time.perf_counter()
        store.search("edit")
        samples.append((time.perf_counter() - start) * 1000)
    write_atomic(target, original)
    return samples


def commits_per_second(workspace: Path, count: int) -> float:
    from store import commits, proposals
    from store.store import Store

    scratch = workspace.parent / f"{workspace.name}-commits"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(workspace, scratch)
    store = Store(scratch, env={**os.environ, "ENGRAM_HOME": str(scratch / "home")})
    store.search("warm up")  # steady state: the store is open, as in a running server
    start = time.perf_counter()
    for n in range(count):
        words = " ".join(stores.queries(3 + n % 5))
        entries, redactions = proposals.draft(
            store, [{"type": "fact", "title": f"Bench fact {n} {words}", "body": f"{words} {n}"}]
        )
        commits.commit(store, proposals.store_proposal(store, entries, redactions, "save").token, "all")
    elapsed = time.perf_counter() - start
    shutil.rmtree(scratch, ignore_errors=True)
    return round(count / elapsed, 1)


def recall() -> float:
    from store.store import Store

    root = Path(__file__).resolve().parent.parent / "fixtures"
    store = Store(root / "workspace", env={"ENGRAM_HOME": str(root / "home")}, read_only=True)
    cases = json.loads((root / "queries.json").read_text())
    hits = sum(1 for c in cases if set(c["expect_top3"]) & {e.id for e in store.search(c["query"], limit=3)})
    return round(hits / len(cases), 3)


def bare_start(repeat: int) -> list[float]:
    return timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), repeat)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="1k and 10k only, fewer repeats (under a minute)"
    )
    parser.add_argument("--out", default=str(Path(__file__).with_name("results.json")))
    args = parser.parse_args()
    root = Path(os.environ.get("ENGRAM_BENCH_DIR", "/tmp/engram-bench"))
    sizes = [1000, 10000] if args.quick else [1000, 10000, 100000]
    repeat = 5 if args.quick else 15
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "sizes": {},
        "failures": [],
    }
    report["bare_interpreter_start"] = summary(bare_start(repeat))
    for size in sizes:
        print(f"store of {size} memories…", file=sys.stderr)
        workspace = stores.build(root, size)
        prime(workspace)
        figures: dict[str, Any] = {}
        figures["cold_initialize"] = summary(cold_start(workspace, "initialize", repeat))
        figures["cold_discover"] = summary(cold_start(workspace, "server/discover", repeat))
        hits: dict[str, int] = {}
        figures["first_search_after_cold_start"] = summary(first_search(workspace, max(3, repeat // 3), hits))
        samples, rss = warm(workspace, repeat * 2, hits)
        figures.update({f"{name}_warm": summary(values) for name, values in samples.items()})
        figures["search_hits"] = hits
        report["failures"] += [f"{size}: no hit for {q!r}" for q, count in hits.items() if count == 0]
        figures["peak_rss_mb"] = round(rss, 1)
        figures["reindex_one_change"] = summary(reindex_one(workspace, repeat))
        if size == 1000:
            figures["hook_session_start"] = summary(hook(workspace, repeat))
            figures["commits_per_second"] = commits_per_second(workspace, 30 if args.quick else 100)
            figures["side_by_side"] = sidebyside.compare(workspace, stores.queries(), repeat)
        report["sizes"][str(size)] = figures
    report["recall_at_3_fixture"] = recall()
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(render(report))
    if report["failures"]:
        print("FAILED: a search that finds nothing is not a speed:", file=sys.stderr)
        for failure in report["failures"]:
            print(f"  {failure}", file=sys.stderr)
        return 1
    return 0


def render(report: dict[str, Any]) -> str:
    bare = report["bare_interpreter_start"]["median_ms"]
    lines = [
        f"bare interpreter start: {bare} ms (median)",
        "",
        "| figure | " + " | ".join(report["sizes"]) + " |",
    ]
    lines.append("|---|" + "---|" * len(report["sizes"]))
    skip = ("side_by_side", "search_hits")
    names = sorted({k for figures in report["sizes"].values() for k in figures if k not in skip})
    for name in names:
        cells = []
        for figures in report["sizes"].values():
            value = figures.get(name)
            if isinstance(value, dict):
                cells.append(f"{value['median_ms']} (p95 {value['p95_ms']})")
            else:
                cells.append("" if value is None else str(value))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "search hits per query (fewest seen; 10 is the page size; 0 fails the run):"]
    for size, figures in report["sizes"].items():
        counts = figures.get("search_hits", {})
        lines.append(f"- {size}: " + ", ".join(f"{q!r} {n}" for q, n in counts.items()))
    side = report["sizes"].get("1000", {}).get("side_by_side")
    if side:
        lines += ["", f"side by side (1k): {side}"]
    lines += ["", f"recall@3 on fixtures/queries.json: {report['recall_at_3_fixture']}"]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
