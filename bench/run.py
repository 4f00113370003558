"""`make bench`: engram's speed and memory figures, each next to its target, and the official
reference server (`@modelcontextprotocol/server-memory`) measured in the same run on the same data.

Drives the real `engram-mcp` over stdio and the real `engram` CLI on synthetic stores of 1k,
10k and 100k memories (`--quick`: 1k and 10k, fewer repeats; about a minute once the stores
exist). Prints a table (units, target, MISS where one is missed) and writes medians and p95s to
build/bench/results.json; `--record` also writes the tracked bench/results.json. Stores are
generated once under $ENGRAM_BENCH_DIR (default /tmp/engram-bench) and reused. The project's
modules are byte-compiled first, as pip leaves an installed package (PYTHONDONTWRITEBYTECODE
would otherwise make every start compile them from source).

A search that finds nothing is not a speed: every timed search's hits are counted per query
(`search_hits`), and a query with no hit at any size is listed under `failures` and makes
the run exit 1 (after the figures are printed and written).
"""

from __future__ import annotations

import argparse
import compileall
import http.cookiejar
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import sidebyside, stores  # noqa: E402
from store.search.vector_extra import extra_installed  # noqa: E402

BIN = Path(sys.executable).parent
SERVER = str(BIN / "engram-mcp")
CLI = str(BIN / "engram")
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "bench"
VECTORS_OFF = {"ENGRAM_VECTORS": "0"}


class Session:
    def __init__(self, workspace: Path, env: dict[str, str] | None = None, stderr: Any = None) -> None:
        env = {**os.environ, "ENGRAM_HOME": str(workspace / "home"), **(env or {})}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [SERVER],
            cwd=workspace,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
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

    def cpu_seconds(self) -> float:
        """User and system CPU time the server has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

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


def prime(workspace: Path, size: int) -> None:
    """Index a new store once (as `engram status` would), so runs measure a store in use; up to
    10k, with a vector extra, the warm-up also embeds every memory into vectors.bin, kept with
    the store for the next run (MiniLM: about a quarter of an hour at 10k, the first time only),
    so the figures "with vectors" time fused searches rather than the BM25 answers of a build
    under way. At 100k MiniLM's first build would take hours: not primed."""
    from store.store import Store

    store = Store(workspace, env={**os.environ, "ENGRAM_HOME": str(workspace / "home")})
    if size <= 10_000:
        store.warm()
    store.search("prime")
    store.close()


def cold_start(workspace: Path, method: str, repeat: int, env: dict[str, str] | None = None) -> list[float]:
    samples = []
    for _ in range(repeat):
        session = Session(workspace, env)
        params = INIT if method == "initialize" else {"_meta": MODERN}
        session.request(method, params)
        samples.append((time.perf_counter() - session.started) * 1000)
        session.close()
    return samples


def ui_first_page(workspace: Path, repeat: int) -> list[float]:
    """Spawn `engram ui --no-open` → its first page read whole: the URL it prints (with the
    launch's key) fetched, the redirect that trades the key for the session cookie followed
    with that cookie, and the list of memories answered 200, in ms. A page that does not list
    the store's first memory (the list is sorted by scope, then id) is not a speed: that stops
    the run. Each server is stopped with SIGINT, as Ctrl-C stops it."""
    env = {**os.environ, "ENGRAM_HOME": str(workspace / "home")}
    first = sorted((workspace / ".engram" / "memory").glob("*.md"))[0].stem
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        proc = subprocess.Popen(
            [CLI, "ui", "--no-open", "--idle-minutes", "1"],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert proc.stdout
            line = proc.stdout.readline().decode(errors="replace").strip()
            if not line.startswith("engram ui: ") or " at http://" not in line:
                raise RuntimeError(f"`engram ui` in {workspace} printed {line!r}, not its URL")
            url = line.rsplit(" at ", 1)[1]
            opener = urllib.request.build_opener(
                urllib.request.ProxyHandler({}),  # the loopback, never through an http_proxy
                urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()),
            )
            with opener.open(url, timeout=60) as response:
                status, body = response.status, response.read().decode()
            took = (time.perf_counter() - started) * 1000
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        total = re.search(r'class="summary">(\d+) memor', body)
        if status != 200 or f'href="/memory/{first}"' not in body or not total or int(total[1]) == 0:
            raise RuntimeError(
                f"`engram ui` at {workspace.name}: first page {status} without the memory list "
                f"(no {first!r} or no count): a page that lists nothing is not a speed"
            )
        samples.append(took)
    return samples


FIRST_QUERY = "migration retry"


def hit_count(reply: dict[str, Any]) -> int:
    """Results of an engram_search reply; an error or a malformed reply counts as none."""
    structured = reply.get("result", {}).get("structuredContent") or {}
    entries = (structured.get("data") or {}).get("entries") if structured.get("ok") else None
    return len(entries) if isinstance(entries, list) else 0


def first_search(
    workspace: Path, repeat: int, hits: dict[str, int], env: dict[str, str] | None = None
) -> tuple[list[float], list[float]]:
    """(spawn → first search answered, initialize answered → first search answered), in ms."""
    from_spawn, from_init = [], []
    for _ in range(repeat):
        session = Session(workspace, env)
        session.request("initialize", INIT)
        start = time.perf_counter()
        reply = session.call("engram_search", {"query": FIRST_QUERY})
        end = time.perf_counter()
        from_spawn.append((end - session.started) * 1000)
        from_init.append((end - start) * 1000)
        hits[FIRST_QUERY] = min(hits.get(FIRST_QUERY, 10**9), hit_count(reply))
        session.close()
    return from_spawn, from_init


def fresh_first_search(workspace: Path, scratch: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Spawn → first search answered on a copy of the store without index.json and search.idx
    (a fresh clone: the index is built from the files); and whether progress was shown."""
    copy = scratch / f"fresh-{workspace.name}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(workspace, copy, ignore=shutil.ignore_patterns("index.json", "search.idx", "seals.log"))
    log = scratch / f"fresh-{workspace.name}.stderr"
    with log.open("wb") as err:
        session = Session(copy, env, stderr=err)
        session.request("initialize", INIT)
        reply = session.call("engram_search", {"query": FIRST_QUERY})
        took = (time.perf_counter() - session.started) * 1000
        session.close()
    shutil.rmtree(copy, ignore_errors=True)
    progress = [line for line in log.read_text(errors="replace").splitlines() if "indexing" in line]
    return {"ms": round(took, 1), "hits": hit_count(reply), "progress_lines": len(progress)}


def idle_cpu_percent(workspace: Path, seconds: float) -> float:
    """CPU a server uses while idle after one search (its sweeper and notification threads)."""
    session = Session(workspace)
    session.request("initialize", INIT)
    session.call("engram_search", {"query": FIRST_QUERY})
    vectors_in(session, FIRST_QUERY)  # the warm-up has loaded the model (searches answer BM25 till then)
    time.sleep(2.0)  # and the sweeper's one catch-up sweep after change notification began is done
    began, cpu = time.perf_counter(), session.cpu_seconds()
    time.sleep(seconds)
    used = session.cpu_seconds() - cpu
    elapsed = time.perf_counter() - began
    session.close()
    return round(100 * used / elapsed, 2)


def vectors_in(session: Session, query: str, seconds: float = 120.0) -> None:
    """Wait until the server's warm-up has the vector model in (searches before that answer
    from BM25 alone), so the figures "with vectors" time fused searches; a no-op without the
    extra."""
    if not extra_installed():
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reply = session.call("engram_search", {"query": query})
        structured = reply.get("result", {}).get("structuredContent") or {}
        used = (structured.get("data") or {}).get("backends_used") or []
        if any(str(name).startswith("vectors:") for name in used):
            return
        time.sleep(0.05)


def warm(
    workspace: Path, repeat: int, hits: dict[str, int], env: dict[str, str] | None = None
) -> tuple[dict[str, list[float]], float]:
    """Warm figures; `hits` gets each query's result count (the smallest seen)."""
    session = Session(workspace, env)
    session.request("initialize", INIT)
    queries = stores.queries()
    session.call("engram_search", {"query": queries[0]})
    session.call("engram_load", {"query": queries[0]})
    if env is None:
        vectors_in(session, queries[0])
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
            lambda q=query: session.call("engram_load", {"query": q, "budget_tokens": 2000}),  # type: ignore[misc]
            1,
        )
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


def cli_read(
    workspace: Path, repeat: int, hits: dict[str, int], env: dict[str, str] | None = None
) -> list[float]:
    """`engram search FIRST_QUERY` as a whole process (the store primed: with the extra, its
    vectors built, so the search is fused and loads the model). Its hits are counted."""
    full = {**os.environ, "ENGRAM_HOME": str(workspace / "home"), **(env or {})}
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(
            [CLI, "search", FIRST_QUERY, "--json"],
            cwd=workspace,
            env=full,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
        )
        samples.append((time.perf_counter() - start) * 1000)
        envelope = json.loads(done.stdout)
        key = "cli: " + FIRST_QUERY + (" (vectors off)" if env else "")
        fused = env is not None or any(b.startswith("vectors:") for b in envelope["data"]["backends_used"])
        found = len(envelope["data"]["entries"]) if fused else 0  # a BM25 answer under the fused name
        hits[key] = min(hits.get(key, 10**9), found)
    return samples


def reindex_one(workspace: Path, repeat: int, env: dict[str, str] | None = None) -> list[float]:
    """In-process: a warm store, one memory rewritten the way engram writes (rename), then a search
    (with vectors on, the search also embeds the rewritten memory)."""
    from store.files.fsutil import write_atomic
    from store.store import Store

    home = {"ENGRAM_HOME": str(workspace / "home")}
    store = Store(workspace, env={**os.environ, **(env or {}), **home}, read_only=True)
    store.search("warm up")
    target = sorted((workspace / ".engram" / "memory").glob("*.md"))[0]
    original, before = target.read_bytes(), target.stat()
    samples = []
    for n in range(repeat):
        write_atomic(target, original + f"\nedit {n}\n".encode())
        start = time.perf_counter()
        store.search("edit")
        samples.append((time.perf_counter() - start) * 1000)
    write_atomic(target, original)
    # the store as it was, so its index.json still matches the file
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    store.close()
    return samples


def commits_per_second(workspace: Path, count: int) -> float:
    from store.store import Store
    from store.write import commits, proposals

    scratch = workspace.parent / f"{workspace.name}-commits"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(workspace, scratch)
    store = Store(scratch, env={**os.environ, "ENGRAM_HOME": str(scratch / "home")})
    store.search("warm up")  # steady state: the store is open, as in a running server,
    deadline = time.monotonic() + 600  # and its vector index built (the warm-up's work)
    while store.finder.vector_state().get("state") in ("loading", "building") and time.monotonic() < deadline:
        time.sleep(0.2)
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


def byte_compile() -> None:
    """Compile the project's modules as pip does for an installed package."""
    for package in ("engram_mcp", "protocol", "store"):
        compileall.compile_dir(ROOT / package, quiet=1)


def size_figures(size: int, workspace: Path, repeat: int, quick: bool) -> dict[str, Any]:
    prime(workspace, size)
    figures: dict[str, Any] = {}
    hits: dict[str, int] = {}
    figures["spawn_to_initialize"] = summary(cold_start(workspace, "initialize", repeat))
    figures["spawn_to_initialize_vectors_off"] = summary(
        cold_start(workspace, "initialize", repeat, VECTORS_OFF)
    )
    figures["spawn_to_discover"] = summary(cold_start(workspace, "server/discover", repeat))
    figures["ui_first_page"] = summary(ui_first_page(workspace, repeat))
    runs = max(3, repeat // 3)
    spawn, after_init = first_search(workspace, runs, hits)
    figures["spawn_to_first_search"] = summary(spawn)
    figures["first_search_after_initialize"] = summary(after_init)
    spawn, after_init = first_search(workspace, runs, hits, VECTORS_OFF)
    figures["spawn_to_first_search_vectors_off"] = summary(spawn)
    samples, rss = warm(workspace, repeat * 2, hits)
    figures.update({f"{name}_warm": summary(values) for name, values in samples.items()})
    samples, rss_off = warm(workspace, repeat * 2, hits, VECTORS_OFF)
    figures["search_warm_vectors_off"] = summary(samples["search"])
    figures["peak_rss_mb"] = round(rss, 1)
    figures["peak_rss_mb_vectors_off"] = round(rss_off, 1)
    figures["reindex_one_change"] = summary(reindex_one(workspace, repeat, VECTORS_OFF))
    if size <= 10000:  # at 100k the vectors were never built: the search would wait on a builder
        figures["reindex_one_change_vectors_on"] = summary(reindex_one(workspace, repeat))
    if size == 10000:
        for name, env in (("fresh_first_search_vectors_off", VECTORS_OFF), ("fresh_first_search", None)):
            fresh = fresh_first_search(workspace, BUILD, env)
            figures[name] = fresh["ms"]
            figures[f"{name}_progress_lines"] = fresh["progress_lines"]
            hits["fresh: " + FIRST_QUERY] = min(hits.get("fresh: " + FIRST_QUERY, 10**9), fresh["hits"])
    if size == 1000:
        figures["hook_session_start"] = summary(hook(workspace, repeat))
        figures["cli_search"] = summary(cli_read(workspace, repeat, hits))
        figures["cli_search_vectors_off"] = summary(cli_read(workspace, repeat, hits, VECTORS_OFF))
        figures["commits_per_second"] = commits_per_second(workspace, 30 if quick else 100)
    if size in (1000, 10000):
        figures["peer"] = sidebyside.compare(BUILD, workspace, FIRST_QUERY, stores.queries(), repeat, summary)
    if size == (10000 if quick else 100000):
        figures["idle_cpu_percent"] = idle_cpu_percent(workspace, 5.0 if quick else 10.0)
    figures["search_hits"] = hits
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="1k and 10k only, fewer repeats (about a minute)"
    )
    parser.add_argument("--out", default=str(BUILD / "results.json"), help="where the figures go (JSON)")
    parser.add_argument("--record", action="store_true", help="also write the tracked bench/results.json")
    parser.add_argument(
        "--sizes", help="comma-separated store sizes instead of the defaults (e.g. --quick --sizes 100000)"
    )
    args = parser.parse_args()
    root = Path(os.environ.get("ENGRAM_BENCH_DIR", "/tmp/engram-bench"))
    BUILD.mkdir(parents=True, exist_ok=True)
    byte_compile()
    sizes = [1000, 10000] if args.quick else [1000, 10000, 100000]
    if args.sizes:
        sizes = [int(size) for size in args.sizes.split(",")]
    repeat = 5 if args.quick else 15
    report: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        },
        "sizes": {},
        "failures": [],
    }
    report["bare_interpreter_start"] = summary(bare_start(repeat))
    for size in sizes:
        print(f"store of {size} memories…", file=sys.stderr)
        figures = size_figures(size, stores.build(root, size), repeat, args.quick)
        report["sizes"][str(size)] = figures
        report["failures"] += [
            f"{size}: no hit for {q!r}" for q, n in figures["search_hits"].items() if n == 0
        ]
        peer = figures.get("peer", {})
        report["failures"] += [
            f"{size} (peer): no hit for {q!r}" for q, n in peer.get("search_hits", {}).items() if n == 0
        ]
    report["recall_at_3_fixture"] = recall()
    report["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["misses"] = [f"{row[0]} at {row[1]}" for row in rows(report) if row[4] == "MISS"]
    text = json.dumps(report, indent=2) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    if args.record:
        Path(__file__).with_name("results.json").write_text(text)
    print(render(report))
    if report["failures"]:
        print("FAILED: a search that finds nothing is not a speed:", file=sys.stderr)
        for failure in report["failures"]:
            print(f"  {failure}", file=sys.stderr)
        return 1
    return 0


# (figure, unit, label, sizes the target applies at (None: all), check, target text)
# A check takes (value, figures of that size, report) and says whether the target is met.
Check = Callable[[float, dict[str, Any], dict[str, Any]], bool | None]


def _peer_ratio(figure: str, bound: float) -> Check:
    def check(value: float, figures: dict[str, Any], report: dict[str, Any]) -> bool | None:
        peer = figures.get("peer", {}).get(figure)
        return None if not isinstance(peer, dict) else value <= bound * peer["median_ms"]

    return check


def _at_most(bound: float) -> Check:
    return lambda value, figures, report: value <= bound


def _below(bound: float) -> Check:
    return lambda value, figures, report: value < bound


def _at_least(bound: float) -> Check:
    return lambda value, figures, report: value >= bound


def _within_of(other: str, factor: float) -> Check:
    def check(value: float, figures: dict[str, Any], report: dict[str, Any]) -> bool | None:
        base = figures.get(other)
        return None if not isinstance(base, dict) else value <= factor * base["median_ms"]

    return check


def _bare(factor: float, bound: float) -> Check:
    def check(value: float, figures: dict[str, Any], report: dict[str, Any]) -> bool | None:
        return value <= bound and value <= factor * report["bare_interpreter_start"]["median_ms"]

    return check


TARGETS: list[tuple[str, str, str, tuple[int, ...] | None, Check | None, str]] = [
    (
        "spawn_to_initialize",
        "ms",
        "spawn → `initialize` answered",
        None,
        _peer_ratio("spawn_to_initialize", 0.5),
        "≤ 0.5× peer",
    ),
    ("spawn_to_initialize", "ms", "", None, _bare(6, 120), "≤ 120 and ≤ 6× bare start"),
    ("spawn_to_initialize_vectors_off", "ms", "  the same, vectors off", None, None, ""),
    (
        "spawn_to_initialize",
        "ms",
        "",
        None,
        _within_of("spawn_to_initialize_vectors_off", 1.15),
        "vectors on ≤ 1.15× off",
    ),
    ("spawn_to_discover", "ms", "spawn → `server/discover` answered", None, None, ""),
    (
        "ui_first_page",
        "ms",
        "spawn → `engram ui` first page",
        (10000,),
        _at_most(1000),
        "≤ 1000 at 10k",
    ),
    (
        "spawn_to_first_search",
        "ms",
        "spawn → first search answered",
        None,
        _peer_ratio("spawn_to_first_search", 0.7),
        "≤ 0.7× peer",
    ),
    ("spawn_to_first_search", "ms", "", (100000,), _at_most(600), "≤ 600 at 100k"),
    ("spawn_to_first_search_vectors_off", "ms", "  the same, vectors off", None, None, ""),
    (
        "first_search_after_initialize",
        "ms",
        "first search after `initialize`",
        (10000,),
        _at_most(300),
        "≤ 300 at 10k",
    ),
    (
        "fresh_first_search",
        "ms",
        "first search, fresh store (index built)",
        (10000,),
        _at_most(1000),
        "≤ 1000 at 10k",
    ),
    (
        "fresh_first_search_vectors_off",
        "ms",
        "  the same, vectors off",
        (10000,),
        _at_most(1000),
        "≤ 1000 at 10k",
    ),
    (
        "fresh_first_search_progress_lines",
        "lines",
        "  progress lines on stderr",
        None,
        None,
        "any build over 1 s",
    ),
    ("tools_list_warm", "ms", "`tools/list`, warm", None, _at_most(2), "≤ 2"),
    ("search_warm", "ms", "`engram_search`, warm (vectors on)", (10000,), _at_most(15), "≤ 15 at 10k"),
    ("search_warm", "ms", "", (100000,), _at_most(50), "≤ 50 at 100k"),
    (
        "search_warm_vectors_off",
        "ms",
        "`engram_search`, warm, vectors off",
        (10000,),
        _at_most(5),
        "≤ 5 at 10k",
    ),
    ("load_warm", "ms", "`engram_load` (budget 2000), warm", (10000,), _at_most(15), "≤ 15 at 10k"),
    (
        "reindex_one_change",
        "ms",
        "re-index after one file changes, vectors off",
        (100000,),
        _at_most(20),
        "≤ 20 at 100k",
    ),
    ("reindex_one_change_vectors_on", "ms", "  the same, vectors on (the memory embedded)", None, None, ""),
    ("peak_rss_mb", "MB", "peak RSS of the server", None, None, ""),
    (
        "peak_rss_mb_vectors_off",
        "MB",
        "  the same, vectors off",
        (100000,),
        _at_most(250),
        "≤ 250 at 100k",
    ),
    ("idle_cpu_percent", "% core", "idle server, CPU", (100000,), _below(1), "< 1 at 100k"),
    ("hook_session_start", "ms", "`engram hook session-start`", (1000,), _at_most(250), "≤ 250 at 1k"),
    (
        "cli_search",
        "ms",
        "`engram search`, a whole process (vectors on)",
        (1000,),
        _within_of("cli_search_vectors_off", 1.3),
        "≤ 1.3× vectors off",
    ),
    ("cli_search_vectors_off", "ms", "  the same, vectors off", (1000,), None, ""),
    ("commits_per_second", "/s", "commits per second, one process", (1000,), _at_least(60), "≥ 60 at 1k"),
]
PEER_ROWS = [
    ("spawn_to_initialize", "ms", "peer: spawn → `initialize` answered"),
    ("spawn_to_first_search", "ms", "peer: spawn → first search answered"),
    ("search_warm", "ms", "peer: `search_nodes`, warm"),
]


def _value(entry: Any) -> float | None:
    if isinstance(entry, dict):
        return float(entry["median_ms"]) if "median_ms" in entry else None
    return float(entry) if isinstance(entry, int | float) else None


def _cell(entry: Any) -> str:
    if isinstance(entry, dict) and "median_ms" in entry:
        return f"{entry['median_ms']:g} ({entry['p95_ms']:g})"
    return "" if entry is None else f"{entry:g}"


def rows(report: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(figure, size, cell, target, verdict) for every figure that has a target."""
    found = []
    for figure, _, _, sizes, check, target in TARGETS:
        if check is None:
            continue
        for size, figures in report["sizes"].items():
            value = _value(figures.get(figure))
            if value is None or (sizes is not None and int(size) not in sizes):
                continue
            met = check(value, figures, report)
            if met is not None:
                found.append((figure, size, _cell(figures[figure]), target, "ok" if met else "MISS"))
    return found


def render(report: dict[str, Any]) -> str:
    sizes = list(report["sizes"])
    verdicts = {(r[0], r[1], r[3]): r[4] for r in rows(report)}
    machine = report["machine"]
    lines = [
        f"{machine['cpus']} cores, CPython {machine['python']}, load average "
        f"{machine['load_average_at_start'][0]} at start, {machine['load_average_at_end'][0]} at end; "
        f"bare interpreter start {report['bare_interpreter_start']['median_ms']} ms",
        "median (p95); MISS marks a missed target; the peer is server-memory in the same run",
        "",
        "| figure | unit | " + " | ".join(f"{int(s):,}" for s in sizes) + " | target |",
        "|---|---|" + "---|" * len(sizes) + "---|",
    ]
    for figure, unit, label, _, _, target in TARGETS:
        cells = []
        for size in sizes:
            entry = report["sizes"][size].get(figure)
            verdict = verdicts.get((figure, size, target))
            cell = _cell(entry)
            cells.append(f"{cell} **MISS**" if verdict == "MISS" else cell)
        if not label:  # a second target for the row above: only where it applies
            cells = [
                c if verdicts.get((figure, s, target)) else "" for c, s in zip(cells, sizes, strict=True)
            ]
            if not any(cells):
                continue
        lines.append(f"| {label or '  ″'} | {unit} | " + " | ".join(cells) + f" | {target} |")
    for figure, unit, label in PEER_ROWS:
        cells = []
        for size in sizes:
            peer = report["sizes"][size].get("peer", {})
            cells.append(_cell(peer.get(figure)) if "skipped" not in peer else "skipped")
        lines.append(f"| {label} | {unit} | " + " | ".join(cells) + " | |")
    for size in sizes:
        skipped = report["sizes"][size].get("peer", {}).get("skipped")
        if skipped:
            lines.append(f"(peer skipped at {size}: {skipped})")
    lines += [
        "",
        f"recall@3 on fixtures/queries.json: {report['recall_at_3_fixture']} (target: no drop, 1.0)",
    ]
    lines += ["", "search hits per query (fewest seen; 10 is the page size; 0 fails the run):"]
    for size, figures in report["sizes"].items():
        counts = figures.get("search_hits", {})
        lines.append(f"- {size}: " + ", ".join(f"{q!r} {n}" for q, n in counts.items()))
        peer_hits = figures.get("peer", {}).get("search_hits")
        if peer_hits:
            lines.append(f"- {size} (peer): " + ", ".join(f"{q!r} {n}" for q, n in peer_hits.items()))
    lines += ["", "each target, met or missed (a ratio is engram's median over the peer's, same run):"]
    for figure, size, cell, target, verdict in rows(report):
        ratio = _ratio(report["sizes"][size], figure) if "peer" in target else None
        shown = f"{cell}" + (f" = {ratio:.2f}× peer" if ratio is not None else "")
        lines.append(f"- {figure} at {int(size):,}: {shown}; target {target}: {_VERDICT[verdict]}")
    misses = report.get("misses") or []
    lines += ["", "targets missed: " + (", ".join(misses) if misses else "none")]
    return "\n".join(lines)


_VERDICT = {"ok": "met", "MISS": "MISSED"}


def _ratio(figures: dict[str, Any], figure: str) -> float | None:
    """engram's median over the peer's for a figure both have (None when the peer has none)."""
    mine, peer = _value(figures.get(figure)), _value(figures.get("peer", {}).get(figure))
    return None if mine is None or not peer else mine / peer


if __name__ == "__main__":
    raise SystemExit(main())
