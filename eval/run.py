"""`make eval`: search quality per query kind and split on engram's own labelled set.

First the overlap line (eval/overlap.py): one line per kind (mean, largest, count over the
line); exit 1 when a paraphrase query shares more than 0.15 of its content words with its
answers, since such a set measures keyword search again.

Then it builds a temp workspace from fixtures/eval/ (a copy; the fixture is never written),
opens `store.store.Store` on it and runs every query through the store's public search (limit
10), then the tiny stores (1 to 5 memories) the same way, and the task descriptions through the
tiered load at budget 2000 (eval/load_eval.py). Prints, per mode and per split (`tune`, `test`;
eval/dataset.py), one table with every kind: recall@5, recall@10, nDCG@10 (graded), MRR, the
median milliseconds per query and the number of queries with no hit (eval/metrics.py), then the
load figures. Two modes: `bm25` (vector signal off, `ENGRAM_VECTORS=0`) and `bm25+vectors` when
the optional `vectors` extra is installed (otherwise it prints "vectors: not installed").
Parameters are chosen on `tune` (`--split tune` for tuning runs) and reported on `test`.

The store builds embeddings off the request path and answers from BM25 alone meanwhile, so the
vector mode waits for each store's build to finish (`store.finder.Finder.vector_state`) before its first
query, and fails (exit 1) when any query was answered without the vector signal: its figures
would be BM25's under the other name.

No public labelled set: none that carries documents, human queries and judgements ships
through PyPI, npm or Debian (README, "Search quality", names the packages tried); the run says
so in one line.

Then the peers' table (eval/peers.py): the own set's test split through engram over MCP (BM25
alone and with its vector signal), `@modelcontextprotocol/server-memory` and basic-memory,
printed after the own tables and kept in the results as `peers`; `--no-peers` skips it.

Writes eval/results.json (or --out; a single-split run writes build/eval/results-<split>.json).

`--baseline FILE` (default eval/baseline.json; `--baseline none` skips) compares the quality
figures per (mode, split, kind) and flags every drop (`drops`): recall@5 may fall by at most one
query's worth (1/n, n the queries of that kind in that split), the other metrics by at most the
same share of their baseline value (a relative 1/n); the load rates by one task's worth. The exit
status is 1 when one dropped. Milliseconds and tokens are printed, never compared.

The baseline, eval/baseline.json, holds the figures of the search that says "no match": BM25
alone returns no hit below its gate, so its paraphrase figures are lower than before the gate by
design (a paraphrase shares few words, and most of BM25's former paraphrase hits were noise).
`--save-baseline` overwrites it with the current figures (made with `--no-peers`).

The set is engram's own; engram is also measured on labelled sets outside this repository, so
a change that only helps here is not a gain.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from eval import build_speed, load_eval, overlap, peers  # noqa: E402
from eval.dataset import (  # noqa: E402
    KINDS,
    LONG_KINDS,
    SPLITS,
    Query,
    build_long_workspace,
    build_tiny,
    build_workspace,
    load_long_queries,
    load_noanswer,
    load_queries,
    load_tasks,
    load_tiny,
)
from eval.metrics import ndcg_at, recall_at, reciprocal_rank  # noqa: E402
from store.search.vector_extra import available  # noqa: E402
from store.store import Store  # noqa: E402

LIMIT = 10
QUALITY = ("recall@5", "recall@10", "ndcg@10", "mrr")
BASELINE = ROOT / "eval" / "baseline.json"
RESULTS = ROOT / "eval" / "results.json"
MODES = ("bm25", "bm25+vectors")
PUBLIC_SET = (
    'public set: none ships through PyPI, npm or Debian (README, "Search quality", names the packages tried)'
)
VECTOR_WAIT = 900.0
"""Seconds a store's first vector build may take before the vector mode gives up on it."""


def vectors_missing() -> str:
    """Why the vector run cannot happen ("" when it can): no vector extra is installed."""
    return "" if available("") else "not installed"


@contextmanager
def vectors_env(on: bool) -> Iterator[dict[str, str]]:
    """The environment a store of one mode sees: `ENGRAM_VECTORS` set both in the mapping the
    store is given and in os.environ (for code that reads the process environment)."""
    saved = os.environ.get("ENGRAM_VECTORS")
    os.environ["ENGRAM_VECTORS"] = "1" if on else "0"
    try:
        yield {"ENGRAM_VECTORS": os.environ["ENGRAM_VECTORS"]}
    finally:
        if saved is None:
            os.environ.pop("ENGRAM_VECTORS", None)
        else:
            os.environ["ENGRAM_VECTORS"] = saved


def ask(store: Store, text: str) -> tuple[list[str], tuple[str, ...], float]:
    """One query through the store's public search: ranked ids, backends used, milliseconds."""
    start = time.perf_counter()
    result = store.find(text, limit=LIMIT)
    elapsed = (time.perf_counter() - start) * 1000
    return [e.id for e in result.entries], tuple(result.backends), elapsed


def wait_for_vectors(store: Store, timeout: float = VECTOR_WAIT) -> dict[str, Any]:
    """The store's vector state once its build is done (`ready`), the signal is `off`, or it
    cannot take part (`unavailable`); still `loading`/`building` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while (state := store.finder.vector_state())["state"] in ("loading", "building"):
        if time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    return state


def open_store(workspace: Path, home: Path, env: dict[str, str]) -> Store:
    """A warmed store whose vector build (when the signal is on) is finished: `warm` embeds the
    backlog on this thread, and a build another thread started is waited for."""
    store = Store(workspace, env={**env, "ENGRAM_HOME": str(home)})
    store.warm()
    wait_for_vectors(store)
    store.search("warm up", limit=LIMIT)  # the first search may load a model: not timed
    return store


def without_vectors(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The queries answered without the vector signal (BM25 alone)."""
    return [r["id"] for r in rows if not any(b.startswith("vectors:") for b in r["backends"])]


def run_queries(store: Store, queries: Sequence[Query]) -> list[dict[str, Any]]:
    rows = []
    for query in queries:
        ranked, backends, ms = ask(store, query.text)
        rows.append(
            {
                "id": query.id,
                "kind": query.kind,
                "split": query.split,
                "ranked": ranked,
                "backends": backends,
                "ms": ms,
                "recall@5": recall_at(ranked, query.labels, 5),
                "recall@10": recall_at(ranked, query.labels, 10),
                "ndcg@10": ndcg_at(ranked, query.labels, 10),
                "mrr": reciprocal_rank(ranked, query.labels),
            }
        )
    return rows


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {"queries": len(rows)}
    for metric in QUALITY:
        summary[metric] = round(statistics.fmean(r[metric] for r in rows), 4)
    summary["ms_median"] = round(statistics.median(r["ms"] for r in rows), 3)
    summary["zero_hits"] = sum(1 for r in rows if not r["ranked"])
    return summary


def by_kind(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every kind's summary, and `all` over the own set's kinds (tiny stores apart)."""
    kinds = {
        kind: summarise(found)
        for kind in (*KINDS, "tiny", *LONG_KINDS)
        if (found := [r for r in rows if r["kind"] == kind])
    }
    if own := [r for r in rows if r["kind"] in KINDS]:
        kinds["all"] = summarise(own)
    return kinds


def run_mode(vectors: bool, splits: Sequence[str], scratch: Path) -> dict[str, Any]:
    """One mode's figures; in the vector mode also `without_vectors` (the queries answered by
    BM25 alone) and `vector_state` (the main store's, as the queries began)."""
    mode = "bm25+vectors" if vectors else "bm25"
    queries = [q for q in load_queries() if q.split in splits]
    rows: list[dict[str, Any]] = []
    with vectors_env(vectors) as env:
        workspace, home = build_workspace(scratch / mode)
        store = open_store(workspace, home, env)
        state = store.finder.vector_state()
        rows += run_queries(store, queries)
        for tiny in load_tiny():
            tiny_workspace, tiny_home = build_tiny(scratch / mode, tiny)
            chosen = [q for q in tiny.queries if q.split in splits]
            rows += run_queries(open_store(tiny_workspace, tiny_home, env), chosen)
        long_workspace, long_home = build_long_workspace(scratch / mode / "long")
        long_queries = [q for q in load_long_queries() if q.split in splits]
        rows += run_queries(open_store(long_workspace, long_home, env), long_queries)
        none = no_match(store, [q for q in load_noanswer() if q.split in splits], splits)
        load_workspace, load_home = build_workspace(scratch / mode / "load")  # load may record use
        load, load_rows = load_eval.run(open_store(load_workspace, load_home, env), load_tasks(), splits)
        if vectors:
            fresh, fresh_home = build_workspace(scratch / mode / "build")
            builds = {"own": build_speed.measure(fresh, fresh_home, env)}
            long_workspace, long_home = build_long_workspace(scratch / mode / "long-build")
            builds["long"] = build_speed.measure(long_workspace, long_home, env)
    backends = sorted({b for r in rows for b in r["backends"]})
    misses = [
        {"id": r["id"], "recall@10": round(r["recall@10"], 4), "top3": r["ranked"][:3]}
        for r in rows
        if r["recall@10"] < 1
    ]
    result = {
        "mode": mode,
        "backends": backends,
        "queries": len(rows),
        "splits": {split: {"kinds": by_kind([r for r in rows if r["split"] == split])} for split in splits},
        "load": load,
        "no_match": none,
        "misses": misses,
        "load_misses": [
            {"id": r["id"], "bodies": r["bodies"][:5]} for r in load_rows if not r["relevant_body"]
        ],
    }
    if vectors:
        result["vector_state"] = state
        result["without_vectors"] = without_vectors(rows)
        result["vector_build"] = builds
    return result


def no_match(store: Store, queries: Sequence[Query], splits: Sequence[str]) -> dict[str, Any]:
    """Per split, the share of the no-answer queries that get no match (no entry at all), and
    the ones that got entries with their first result."""
    found: dict[str, Any] = {}
    for split in splits:
        asked = [q for q in queries if q.split == split]
        answered = {q.id: ids[0] for q in asked if (ids := ask(store, q.text)[0])}
        found[split] = {
            "queries": len(asked),
            "no_match_rate": round(1 - len(answered) / len(asked), 4) if asked else 0.0,
            "answered": answered,
        }
    return found


def table(result: dict[str, Any], split: str) -> str:
    head = f"{'kind':<11} {'n':>4} {'R@5':>6} {'R@10':>6} {'nDCG@10':>8} {'MRR':>6} {'ms/q':>7} {'zero':>5}"
    lines = [f"{result['mode']} {split} (backends: {', '.join(result['backends'])})", head]
    for kind, s in result["splits"][split]["kinds"].items():
        lines.append(
            f"{kind:<11} {s['queries']:>4} {s['recall@5']:>6.3f} {s['recall@10']:>6.3f} "
            f"{s['ndcg@10']:>8.3f} {s['mrr']:>6.3f} {s['ms_median']:>7.2f} {s['zero_hits']:>5}"
        )
    lines.append(load_eval.line(split, result["load"][split]))
    none = result["no_match"][split]
    lines.append(
        f"no-answer {split:<5} n {none['queries']:>3}  no match {none['no_match_rate']:.3f}"
        f"  (answered {len(none['answered'])}: {', '.join(sorted(none['answered'])[:8])})"
    )
    return "\n".join(lines)


def allowed(metric: str, old: float, n: int) -> float:
    """How far a figure over `n` queries may fall: recall@5 one query's worth (1/n), the other
    metrics the same share of their own value (old / n)."""
    share = 1 / n if n else 0.0
    return share if metric == "recall@5" else old * share


def _figures(result: dict[str, Any]) -> dict[tuple[str, str], tuple[dict[str, Any], tuple[str, ...], int]]:
    """(split, kind) -> (figures, metrics to compare, n) of one mode's result."""
    found: dict[tuple[str, str], tuple[dict[str, Any], tuple[str, ...], int]] = {}
    for split, per in result.get("splits", {}).items():
        for kind, figures in per.get("kinds", {}).items():
            found[(split, kind)] = (figures, QUALITY, int(figures["queries"]))
    for split, figures in result.get("load", {}).items():
        if figures.get("tasks"):
            found[(split, "load")] = (figures, load_eval.RATES, int(figures["tasks"]))
    return found


def drops(current: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """Every (mode, split, kind, metric) whose figure fell below the baseline's by more than
    `allowed` (n from the current run). A mode the baseline did not run (`bm25+vectors` when
    the extra was missing) is held to the baseline's `bm25` figures: the vector signal may add,
    never take away. A (split, kind) the baseline does not hold is not compared."""
    found = []
    modes = baseline.get("modes", {})
    for mode, result in current["modes"].items():
        before = modes.get(mode)
        if not isinstance(before, dict):
            before = modes.get("bm25")
        if not isinstance(result, dict) or not isinstance(before, dict):
            continue
        old_figures = _figures(before)
        for (split, kind), (figures, metrics, n) in _figures(result).items():
            if (split, kind) not in old_figures:
                continue
            old = old_figures[(split, kind)][0]
            for metric in metrics:
                if metric in old and figures[metric] < old[metric] - allowed(metric, old[metric], n) - 1e-9:
                    found.append(
                        f"{mode} {split} {kind} {metric}: {old[metric]:.4f} -> {figures[metric]:.4f}"
                        f" (n {n}, allowed {allowed(metric, old[metric], n):.4f})"
                    )
    return found


def gains(result: dict[str, Any], reference: dict[str, Any], split: str) -> str:
    """recall@5 per kind of one run against another of the same set (vectors against BM25)."""
    mine, theirs = result["splits"][split]["kinds"], reference["splits"][split]["kinds"]
    parts = [
        f"{kind} {figures['recall@5'] - theirs[kind]['recall@5']:+.3f}" for kind, figures in mine.items()
    ]
    return f"recall@5 {split}, {result['mode']} against {reference['mode']}: " + ", ".join(parts)


def peer_row(row: peers.PeerRow) -> dict[str, Any]:
    """One peers' row for the results: its figures, or the reason it has none."""
    head: dict[str, Any] = {"server": row.server, "set": row.set}
    if row.failed:
        return {**head, "reason": row.failed}
    return {
        **head,
        "n": row.queries,
        "recall@5": round(row.recall5, 4),
        "mrr": round(row.mrr, 4),
        "tokens_per_query": round(row.tokens, 1),
        "zero_hits": row.zero_hits,
        "load_seconds": round(row.load_seconds, 2),
        "version": row.version,
        "recall@5_by_kind": {kind: round(value, 4) for kind, value in row.kinds.items()},
        "note": row.note,
    }


def run_peers(scratch: Path, vectors: bool) -> list[peers.PeerRow]:
    """engram (BM25 alone and, with the extra, with its vector signal), server-memory and
    basic-memory on the own set's test split, each over MCP."""
    own = [q for q in load_queries() if q.split == SPLITS[-1]]
    modes = ("0", "1") if vectors else ("0",)
    return peers.measure(f"own ({SPLITS[-1]})", peers.own_memories(), own, scratch, engram_vectors=modes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=None, help="where to write the figures (JSON)")
    parser.add_argument("--baseline", default=str(BASELINE), help="figures to compare with, or 'none'")
    parser.add_argument("--split", choices=(*SPLITS, "both"), default="both", help="which split to run")
    parser.add_argument(
        "--save-baseline", action="store_true", help="also write the figures to eval/baseline.json"
    )
    parser.add_argument("--no-vectors", action="store_true", help="run BM25 alone even with the extra")
    parser.add_argument("--no-peers", action="store_true", help="skip the peers' table")
    args = parser.parse_args(argv)
    splits = SPLITS if args.split == "both" else (args.split,)
    out = args.out or (
        RESULTS if args.split == "both" else ROOT / "build" / "eval" / f"results-{args.split}.json"
    )

    rows, over = overlap.measure()
    print("\n".join(rows))
    if over:
        print("OVER THE OVERLAP LINE (the paraphrase kind measures keyword search again):")
        print("\n".join(f"  {line}" for line in over))
        return 1
    print()

    print(PUBLIC_SET)

    queries = load_queries()
    output: dict[str, Any] = {
        "set": {
            "memories": sum(1 for _ in (ROOT / "fixtures" / "eval").rglob("memory/*.md")),
            "queries": {
                split: {
                    kind: sum(1 for q in queries if q.kind == kind and q.split == split) for kind in KINDS
                }
                for split in splits
            },
            "tasks": {split: sum(1 for t in load_tasks() if t.split == split) for split in splits},
            "tiny_stores": len(load_tiny()),
            "overlap": rows,
        },
        "limit": LIMIT,
        "load_budget": load_eval.BUDGET,
        "modes": {},
    }
    missing = "switched off (--no-vectors)" if args.no_vectors else vectors_missing()
    failed = ""
    with tempfile.TemporaryDirectory(prefix="engram-eval-") as scratch:
        for vectors in (False, True):
            if vectors and missing:
                print(f"vectors: {missing}")
                output["modes"]["bm25+vectors"] = missing
                continue
            result = run_mode(vectors, splits, Path(scratch))
            if vectors and (bm25_only := result["without_vectors"]):
                failed = (
                    f"VECTORS DID NOT TAKE PART in {len(bm25_only)} of {result['queries']} queries "
                    f"(answered by BM25 alone: {', '.join(bm25_only[:5])}{', ...' if len(bm25_only) > 5 else ''}; "
                    f"vector state {result['vector_state']}): the bm25+vectors figures would be BM25's"
                )
                print(failed)
                output["modes"]["bm25+vectors"] = failed
                continue
            for split in splits:
                print(table(result, split))
                if vectors:
                    print(gains(result, output["modes"]["bm25"], split))
                print()
            for name, figures in result.get("vector_build", {}).items():
                print(build_speed.line(name, figures))
            output["modes"][result["mode"]] = result
        if args.no_peers:
            print("peers: switched off (--no-peers)")
        elif SPLITS[-1] not in splits:
            print(f"peers: not run (they take the {SPLITS[-1]} split)")
        else:
            peer_rows = run_peers(Path(scratch) / "peers", vectors=not missing)
            print(peers.table(peer_rows))
            print()
            output["peers"] = [peer_row(row) for row in peer_rows]

    out.parent.mkdir(parents=True, exist_ok=True)
    for target in (out, BASELINE) if args.save_baseline else (out,):
        target.write_text(json.dumps(output, indent=1) + "\n", encoding="utf-8")
        print(f"figures written to {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")

    if failed:
        return 1
    baseline_path = None if args.baseline == "none" else Path(args.baseline)
    if args.save_baseline or baseline_path is None or not baseline_path.exists():
        return 0
    found = drops(output, json.loads(baseline_path.read_text(encoding="utf-8")))
    if found:
        print(f"DROPPED against {baseline_path.name}:")
        for line in found:
            print(f"  {line}")
        return 1
    print(f"no kind drops against {baseline_path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
