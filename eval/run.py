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

Where they exist, two more sets: the public labelled set (eval/public_set.py; held out whole,
never used to choose a parameter, its row takes part in the drop check) and the peers' table
(eval/peers.py: the same test split and public set through other memory servers; `--no-peers`
skips it). Each prints "public set: <reason>" / "peers: <reason>" when it cannot run.

Writes eval/results.json (or --out; a single-split run writes build/eval/results-<split>.json).

`--baseline FILE` (default eval/baseline.json; `--baseline none` skips) compares the quality
figures per (mode, split, kind) and flags every drop (`drops`): recall@5 may fall by at most one
query's worth (1/n, n the queries of that kind in that split), the other metrics by at most the
same share of their baseline value (a relative 1/n); the load rates by one task's worth. The exit
status is 1 when one dropped. Milliseconds and tokens are printed, never compared.

The baseline, eval/baseline.json, is today's figures: the code of commit c090c92 (before issue
21's search, model and session changes) measured on the rebuilt set (paraphrase queries at most
0.15 overlap, splits, tasks), both modes, both splits, with the load figures. It was made by
running this script with `--no-peers` in a worktree of c090c92 with this eval/ and
fixtures/eval/ copied in; `--save-baseline` overwrites it with the current figures.

The set is engram's own; engram is also measured on labelled sets outside this repository, so
a change that only helps here is not a gain.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from eval import load_eval, overlap  # noqa: E402
from eval.dataset import (  # noqa: E402
    KINDS,
    SPLITS,
    Query,
    build_tiny,
    build_workspace,
    load_queries,
    load_tasks,
    load_tiny,
)
from eval.metrics import ndcg_at, recall_at, reciprocal_rank  # noqa: E402
from store.files.memory import parse_memory  # noqa: E402
from store.store import Store  # noqa: E402

LIMIT = 10
QUALITY = ("recall@5", "recall@10", "ndcg@10", "mrr")
BASELINE = ROOT / "eval" / "baseline.json"
RESULTS = ROOT / "eval" / "results.json"
PUBLIC_CACHE = ROOT / "build" / "eval" / "public"
MODES = ("bm25", "bm25+vectors")
PUBLIC = "public"
"""The split (and kind) of the public set's row: held out whole, never tuned on."""


def vectors_missing() -> str:
    """Why the vector run cannot happen ("" when it can): the store has no vector signal yet,
    or the `vectors` extra is not installed."""
    try:
        vectors = importlib.import_module("store.search.vectors")
    except ImportError:
        return "not installed"
    installed = getattr(vectors, "extra_installed", None)
    return "" if callable(installed) and installed() else "not installed"


def optional(name: str) -> tuple[ModuleType | None, str]:
    """Another helper's module (eval.public_set, eval.peers), or why it cannot be used."""
    try:
        return importlib.import_module(name), ""
    except ImportError as error:
        return None, f"{name} does not import ({error})"
    except Exception as error:  # a module being written may fail in any way: say so, run on
        return None, f"{name} failed to import ({type(error).__name__}: {error})"


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
                "split": query.split or PUBLIC,
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
        for kind in (*KINDS, "tiny")
        if (found := [r for r in rows if r["kind"] == kind])
    }
    if own := [r for r in rows if r["kind"] in KINDS]:
        kinds["all"] = summarise(own)
    return kinds


def run_mode(
    vectors: bool, splits: Sequence[str], scratch: Path, public: ModuleType | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the mode's figures, what the peers need: the built workspace)."""
    mode = "bm25+vectors" if vectors else "bm25"
    queries = [q for q in load_queries() if q.split in splits]
    rows: list[dict[str, Any]] = []
    with vectors_env(vectors) as env:
        workspace, home = build_workspace(scratch / mode)
        rows += run_queries(open_store(workspace, home, env), queries)
        for tiny in load_tiny():
            tiny_workspace, tiny_home = build_tiny(scratch / mode, tiny)
            chosen = [q for q in tiny.queries if q.split in splits]
            rows += run_queries(open_store(tiny_workspace, tiny_home, env), chosen)
        load_workspace, load_home = build_workspace(scratch / mode / "load")  # load may record use
        load, load_rows = load_eval.run(open_store(load_workspace, load_home, env), load_tasks(), splits)
        public_result: dict[str, Any] | str = "not built"
        if public is not None and SPLITS[-1] in splits:  # held out: never in a tuning run
            public_result = run_public(public, scratch / mode / PUBLIC, env)
    backends = sorted({b for r in rows for b in r["backends"]})
    misses = [
        {"id": r["id"], "recall@10": round(r["recall@10"], 4), "top3": r["ranked"][:3]}
        for r in rows
        if r["recall@10"] < 1
    ]
    result = {
        "mode": mode,
        "backends": backends,
        "splits": {split: {"kinds": by_kind([r for r in rows if r["split"] == split])} for split in splits},
        "load": load,
        "public": public_result,
        "misses": misses,
        "load_misses": [
            {"id": r["id"], "bodies": r["bodies"][:5]} for r in load_rows if not r["relevant_body"]
        ],
    }
    return result, {"workspace": workspace, "home": home, "queries": queries}


def run_public(public: ModuleType, root: Path, env: dict[str, str]) -> dict[str, Any] | str:
    try:
        workspace, home, queries = public.build(root)
        rows = run_queries(open_store(workspace, home, env), queries)
    except Exception as error:  # another helper's set: report it, never lose the own figures
        return f"failed ({type(error).__name__}: {error})"
    if not rows:
        return "no queries"
    return {"kinds": {PUBLIC: summarise(rows)}, "workspace": str(workspace), "queries": len(rows)}


def table(result: dict[str, Any], split: str) -> str:
    head = f"{'kind':<11} {'n':>4} {'R@5':>6} {'R@10':>6} {'nDCG@10':>8} {'MRR':>6} {'ms/q':>7} {'zero':>5}"
    lines = [f"{result['mode']} {split} (backends: {', '.join(result['backends'])})", head]
    kinds = dict(result["splits"][split]["kinds"])
    if split == SPLITS[-1] and isinstance(result.get("public"), dict):
        kinds.update(result["public"]["kinds"])  # the held-out row goes with the reported split
    for kind, s in kinds.items():
        lines.append(
            f"{kind:<11} {s['queries']:>4} {s['recall@5']:>6.3f} {s['recall@10']:>6.3f} "
            f"{s['ndcg@10']:>8.3f} {s['mrr']:>6.3f} {s['ms_median']:>7.2f} {s['zero_hits']:>5}"
        )
    lines.append(load_eval.line(split, result["load"][split]))
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
    if isinstance(result.get("public"), dict):
        for kind, figures in result["public"]["kinds"].items():
            found[(PUBLIC, kind)] = (figures, QUALITY, int(figures["queries"]))
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


def peer_memories(workspace: Path, home: Path) -> list[dict[str, Any]]:
    """The built workspace's active memories as the peers take them: {id, type, title, tags, body}."""
    found = []
    for scope, folder in (("project", workspace / ".engram" / "memory"), ("user", home / "memory")):
        for path in sorted(folder.glob("*.md")):
            memory = parse_memory(path.read_bytes(), file_id=path.stem, scope=scope, tier="durable")
            if memory.active:
                found.append(
                    {
                        "id": memory.id,
                        "type": memory.type,
                        "title": memory.title,
                        "tags": list(memory.tags),
                        "body": memory.body,
                    }
                )
    return found


def run_peers(peers: ModuleType, built: dict[str, Any], public: ModuleType | None, scratch: Path) -> str:
    """The peers' table on the own set's test split and the public set."""
    own = [q for q in built["queries"] if q.split == SPLITS[-1]]
    rows = list(
        peers.measure("own (test)", peer_memories(built["workspace"], built["home"]), own, scratch / "own")
    )
    if public is not None:
        workspace, home, queries = public.build(scratch / "public-set")
        rows += peers.measure(
            str(getattr(public, "NAME", PUBLIC)), peer_memories(workspace, home), queries, scratch / "public"
        )
    return str(peers.table(rows))


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

    public, public_why = optional("eval.public_set")
    if public is not None:
        public_why = str(public.prepare(PUBLIC_CACHE))
        if public_why:
            public = None
    if public is None:
        print(f"public set: {public_why}")
    peers, peers_why = (None, "switched off (--no-peers)") if args.no_peers else optional("eval.peers")

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
    built: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="engram-eval-") as scratch:
        for vectors in (False, True):
            if vectors and missing:
                print(f"vectors: {missing}")
                output["modes"]["bm25+vectors"] = missing
                continue
            result, built = run_mode(vectors, splits, Path(scratch), public)
            if vectors and not any(b.startswith("vectors:") for b in result["backends"]):
                print("vectors: installed, but the signal did not take part (see engram status)")
                output["modes"]["bm25+vectors"] = "did not take part"
                continue
            for split in splits:
                print(table(result, split))
                if vectors:
                    print(gains(result, output["modes"]["bm25"], split))
                print()
            if isinstance(result["public"], str) and public is not None:
                print(f"public set: {result['public']}")
            output["modes"][result["mode"]] = result
        if peers is not None and built and SPLITS[-1] in splits:
            try:
                print(run_peers(peers, built, public, Path(scratch) / "peers"))
            except Exception as error:  # another helper's code: report it, keep the own figures
                print(f"peers: failed ({type(error).__name__}: {error})")
        else:
            print(f"peers: {peers_why or 'nothing was built'}")

    out.parent.mkdir(parents=True, exist_ok=True)
    for target in (out, BASELINE) if args.save_baseline else (out,):
        target.write_text(json.dumps(output, indent=1) + "\n", encoding="utf-8")
        print(f"figures written to {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")

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
