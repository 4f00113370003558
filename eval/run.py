"""`make eval`: search quality per query kind on engram's own labelled set.

Builds a temp workspace from fixtures/eval/ (a copy; the fixture is never written), opens
`store.store.Store` on it and runs every query through the store's public search (limit 10),
then the tiny stores (1 to 5 memories) the same way. Prints, per kind: recall@5, recall@10,
nDCG@10 (graded), MRR, the median milliseconds per query and the number of queries with no hit
at all (metrics: eval/metrics.py). Two runs: `bm25` (vector signal off, `ENGRAM_VECTORS=0`)
and `bm25+vectors` when the optional `vectors` extra is installed (otherwise it prints
"vectors: not installed"). Writes eval/results.json (or --out).

`--baseline FILE` (default eval/baseline.json when it exists; `--baseline none` skips) compares
the quality figures per mode and kind and flags every drop; the exit status is 1 when one
dropped. Milliseconds are printed, never compared: they depend on the machine.
`--save-baseline` also writes them to eval/baseline.json (today's figures, to compare with).

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

from eval.dataset import KINDS, Query, build_tiny, build_workspace, load_queries, load_tiny  # noqa: E402
from eval.metrics import ndcg_at, recall_at, reciprocal_rank  # noqa: E402
from store.store import Store  # noqa: E402

LIMIT = 10
QUALITY = ("recall@5", "recall@10", "ndcg@10", "mrr")
BASELINE = ROOT / "eval" / "baseline.json"
RESULTS = ROOT / "eval" / "results.json"
MODES = ("bm25", "bm25+vectors")


def vectors_missing() -> str:
    """Why the vector run cannot happen ("" when it can): the store has no vector signal yet,
    or the `vectors` extra is not installed."""
    try:
        from store.search import vectors
    except ImportError:
        return "not installed"
    installed = getattr(vectors, "extra_installed", None)
    return "" if callable(installed) and installed() else "not installed"


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
    find = getattr(store, "find", None)  # the search with its `backends_used`, where it exists
    start = time.perf_counter()
    if find is not None:
        result = find(text, limit=LIMIT)
        entries, backends = result.entries, tuple(result.backends)
    else:
        entries, backends = store.search(text, limit=LIMIT), ("bm25",)
    elapsed = (time.perf_counter() - start) * 1000
    return [e.id for e in entries], backends, elapsed


def open_store(workspace: Path, home: Path, env: dict[str, str]) -> Store:
    store = Store(workspace, env={**env, "ENGRAM_HOME": str(home)})
    store.warm()
    store.search("warm up", limit=LIMIT)  # the first search may load a model: not timed
    return store


def run_queries(store: Store, queries: Sequence[Query]) -> list[dict[str, Any]]:
    rows = []
    for query in queries:
        ranked, backends, ms = ask(store, query.text)
        rows.append(
            {
                "id": query.id,
                "kind": query.kind,
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


def run_mode(vectors: bool, queries: Sequence[Query], scratch: Path) -> dict[str, Any]:
    mode = "bm25+vectors" if vectors else "bm25"
    rows: list[dict[str, Any]] = []
    with vectors_env(vectors) as env:
        workspace, home = build_workspace(scratch / mode)
        rows += run_queries(open_store(workspace, home, env), queries)
        for tiny in load_tiny():
            workspace, home = build_tiny(scratch / mode, tiny)
            rows += run_queries(open_store(workspace, home, env), tiny.queries)
    backends = sorted({b for r in rows for b in r["backends"]})
    kinds = {kind: summarise([r for r in rows if r["kind"] == kind]) for kind in (*KINDS, "tiny")}
    kinds["all"] = summarise([r for r in rows if r["kind"] != "tiny"])
    misses = [
        {"id": r["id"], "recall@10": round(r["recall@10"], 4), "top3": r["ranked"][:3]}
        for r in rows
        if r["recall@10"] < 1
    ]
    return {"mode": mode, "backends": backends, "kinds": kinds, "misses": misses}


def table(result: dict[str, Any]) -> str:
    head = f"{'kind':<11} {'n':>4} {'R@5':>6} {'R@10':>6} {'nDCG@10':>8} {'MRR':>6} {'ms/q':>7} {'zero':>5}"
    lines = [f"{result['mode']} (backends: {', '.join(result['backends'])})", head]
    for kind, s in result["kinds"].items():
        lines.append(
            f"{kind:<11} {s['queries']:>4} {s['recall@5']:>6.3f} {s['recall@10']:>6.3f} "
            f"{s['ndcg@10']:>8.3f} {s['mrr']:>6.3f} {s['ms_median']:>7.2f} {s['zero_hits']:>5}"
        )
    return "\n".join(lines)


def drops(current: dict[str, Any], baseline: dict[str, Any], tolerance: float) -> list[str]:
    """Every (mode, kind, metric) whose figure fell below the baseline's by more than `tolerance`.
    A mode the baseline did not run (`bm25+vectors` when the extra was missing) is held to the
    baseline's `bm25` figures: the vector signal may add, never take away."""
    found = []
    modes = baseline.get("modes", {})
    for mode, result in current["modes"].items():
        before = modes.get(mode)
        if not isinstance(before, dict):
            before = modes.get("bm25")
        if not isinstance(result, dict) or not isinstance(before, dict):
            continue
        for kind, figures in result["kinds"].items():
            old = before.get("kinds", {}).get(kind)
            if old is None:
                continue
            for metric in QUALITY:
                if figures[metric] < old[metric] - tolerance:
                    found.append(f"{mode} {kind} {metric}: {old[metric]:.4f} -> {figures[metric]:.4f}")
    return found


def gains(result: dict[str, Any], reference: dict[str, Any]) -> str:
    """recall@5 per kind of one run against another of the same set (vectors against BM25)."""
    parts = [
        f"{kind} {figures['recall@5'] - reference['kinds'][kind]['recall@5']:+.3f}"
        for kind, figures in result["kinds"].items()
    ]
    return f"recall@5, {result['mode']} against {reference['mode']}: " + ", ".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the figures (JSON)")
    parser.add_argument("--baseline", default=str(BASELINE), help="figures to compare with, or 'none'")
    parser.add_argument("--tolerance", type=float, default=0.0, help="allowed drop per figure")
    parser.add_argument(
        "--save-baseline", action="store_true", help="also write the figures to eval/baseline.json"
    )
    parser.add_argument("--no-vectors", action="store_true", help="run BM25 alone even with the extra")
    args = parser.parse_args(argv)

    queries = load_queries()
    memories = sum(1 for _ in (ROOT / "fixtures" / "eval").rglob("memory/*.md"))
    output: dict[str, Any] = {
        "set": {
            "memories": memories,
            "queries": {kind: sum(1 for q in queries if q.kind == kind) for kind in KINDS},
            "tiny_stores": len(load_tiny()),
        },
        "limit": LIMIT,
        "modes": {},
    }
    missing = "switched off (--no-vectors)" if args.no_vectors else vectors_missing()
    with tempfile.TemporaryDirectory(prefix="engram-eval-") as scratch:
        for vectors in (False, True):
            if vectors and missing:
                print(f"vectors: {missing}")
                output["modes"]["bm25+vectors"] = missing
                continue
            result = run_mode(vectors, queries, Path(scratch))
            if vectors and not any(b.startswith("vectors:") for b in result["backends"]):
                print("vectors: installed, but the signal did not take part (see engram status)")
                output["modes"]["bm25+vectors"] = "did not take part"
                continue
            print(table(result))
            if vectors:
                print(gains(result, output["modes"]["bm25"]))
            print()
            output["modes"][result["mode"]] = result

    for target in (args.out, BASELINE) if args.save_baseline else (args.out,):
        target.write_text(json.dumps(output, indent=1) + "\n", encoding="utf-8")
        print(f"figures written to {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")

    baseline_path = None if args.baseline == "none" else Path(args.baseline)
    if args.save_baseline or baseline_path is None or not baseline_path.exists():
        return 0
    found = drops(output, json.loads(baseline_path.read_text(encoding="utf-8")), args.tolerance)
    if found:
        print(f"DROPPED against {baseline_path.name}:")
        for line in found:
            print(f"  {line}")
        return 1
    print(f"no kind drops against {baseline_path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
