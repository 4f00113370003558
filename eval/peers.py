"""Search quality side by side: engram, `@modelcontextprotocol/server-memory` and basic-memory,
each driven over MCP stdio on the same memories and the same labelled queries (issue 21, item 5).

`measure(set_name, memories, queries, scratch)` starts each server (eval/peers_servers.py says
how, at which pinned version, and why engram's memories are written as files), loads the set,
runs every query through the server's search tool and scores the ranked ids: recall@5 and MRR
(eval/metrics.py), the mean tokens of the tool's result text per query (engram's one token
rule, store.read.load.count_tokens, for all three), the queries with no hit, the seconds from
spawn to loaded (and, for engram, its first search answered) and the version. A server that
cannot be installed or started gives a row with its reason instead of figures. `table(rows)`
prints one table, a row per server and set.

What the comparison does not level out (read the figures with it):
- server-memory matches the whole query as one substring: a query of several words finds only
  an entity holding those words verbatim, in that order. It returns every match with every
  observation in full, so its tokens are whole memories; ranked in the order it returns.
- basic-memory's text reply names titles and permalinks, no body: its tokens are low because a
  model must call `read_note` next. Its semantic half is off where SQLite cannot load
  extensions or its model cannot be fetched (offline here): the row's note says so.
- engram's reply holds a snippet of each result; superseded memories are loaded into all three,
  and only engram knows to leave them out (no label names one).

`.venv/bin/python -m eval.peers` runs engram's own set (fixtures/eval: its test split when the
queries carry a `split`, every query with `--all`) and prints the table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from eval.dataset import FIXTURE, Query, load_queries  # noqa: E402
from eval.metrics import recall_at, reciprocal_rank  # noqa: E402
from eval.peers_client import PeerError  # noqa: E402
from eval.peers_servers import (  # noqa: E402
    Opened,
    open_basic_memory,
    open_engram,
    open_server_memory,
)
from store.files.memory import split_front_matter  # noqa: E402
from store.read.load import count_tokens  # noqa: E402
from store.search.vector_extra import available  # noqa: E402

Opener = Callable[[Sequence[dict[str, Any]], Path], Opened]


@dataclass
class PeerRow:
    server: str
    set: str
    version: str = ""
    queries: int = 0
    recall5: float = 0.0
    mrr: float = 0.0
    tokens: float = 0.0  # mean tokens of the search tool's result text per query
    zero_hits: int = 0
    load_seconds: float = 0.0
    kinds: dict[str, float] = field(default_factory=dict)  # recall@5 per query kind
    note: str = ""
    failed: str = ""  # why there are no figures ("" when there are)
    ranked: dict[str, list[str]] = field(default_factory=dict)  # query id -> ids, best first


def servers(engram_vectors: Sequence[str | None] = (None,)) -> list[tuple[str, Opener]]:
    """(row name, opener) for each server; engram once per `ENGRAM_VECTORS` value asked for
    (None: whatever the environment says)."""
    found: list[tuple[str, Opener]] = []
    for value in engram_vectors:
        name = "engram" if value is None else f"engram (ENGRAM_VECTORS={value})"
        found.append((name, _engram(value)))
    found.append(("server-memory", lambda m, s: open_server_memory(m, s)))
    found.append(("basic-memory", lambda m, s: open_basic_memory(m, s)))
    return found


def _engram(vectors: str | None) -> Opener:
    return lambda memories, scratch: open_engram(memories, scratch, vectors)


def score(row: PeerRow, opened: Opened, queries: Sequence[Query]) -> None:
    recalls: list[float] = []
    ranks: list[float] = []
    tokens: list[int] = []
    by_kind: dict[str, list[float]] = {}
    for query in queries:
        ids, text = opened.ask(query.text)
        row.ranked[query.id] = ids
        recalls.append(recall_at(ids, query.labels, 5))
        ranks.append(reciprocal_rank(ids, query.labels))
        tokens.append(count_tokens(text))
        by_kind.setdefault(query.kind, []).append(recalls[-1])
        row.zero_hits += not ids
    row.queries = len(queries)
    if queries:
        row.recall5 = statistics.fmean(recalls)
        row.mrr = statistics.fmean(ranks)
        row.tokens = statistics.fmean(tokens)
    row.kinds = {kind: statistics.fmean(values) for kind, values in sorted(by_kind.items())}


def measure(
    set_name: str,
    memories: list[dict[str, Any]],
    queries: list[Query],
    scratch: Path,
    engram_vectors: Sequence[str | None] = (None,),
    only: Sequence[str] = (),
) -> list[PeerRow]:
    """One row per server (`only`: those whose name starts with one of these) on this set."""
    rows = []
    for n, (name, opener) in enumerate(servers(engram_vectors)):
        if only and not any(name.startswith(o) for o in only):
            continue
        row = PeerRow(name, set_name)
        try:
            opened = opener(memories, scratch / f"{n}-{name.split()[0]}")
        except (PeerError, OSError) as exc:
            row.failed = str(exc)
            rows.append(row)
            continue
        try:
            row.version, row.load_seconds = opened.version, opened.load_seconds
            score(row, opened, queries)
            backends = f"backends: {', '.join(sorted(opened.backends))}" if opened.backends else ""
            row.note = "; ".join(part for part in (opened.note, backends) if part)
        except (PeerError, OSError) as exc:
            row.failed = f"during the queries: {exc}"
        finally:
            opened.client.close()
        rows.append(row)
    return rows


def table(rows: Sequence[PeerRow]) -> str:
    head = (
        f"{'server':<28} {'set':<14} {'n':>4} {'R@5':>6} {'MRR':>6} {'tok/q':>7} "
        f"{'zero':>5} {'load s':>7}  version   R@5 by kind"
    )
    lines = [head]
    for r in rows:
        if r.failed:
            lines.append(f"{r.server:<28} {r.set:<14} not measured: {r.failed}")
            continue
        kinds = ", ".join(f"{k} {v:.3f}" for k, v in r.kinds.items())
        lines.append(
            f"{r.server:<28} {r.set:<14} {r.queries:>4} {r.recall5:>6.3f} {r.mrr:>6.3f} {r.tokens:>7.1f} "
            f"{r.zero_hits:>5} {r.load_seconds:>7.2f}  {r.version:<9} {kinds}"
        )
    notes = [f"- {r.server}: {r.note}" for r in rows if r.note]
    return "\n".join(lines + (["notes:", *notes] if notes else []))


PASSED_THROUGH = ("always", "created", "updated", "source", "superseded_by")


def own_memories(fixture: Path = FIXTURE) -> list[dict[str, Any]]:
    """fixtures/eval's memories (project and user scope, superseded ones too) as dicts."""
    memories: list[dict[str, Any]] = []
    for scope, folder in (("project", fixture / "memory"), ("user", fixture / "user" / "memory")):
        for path in sorted(folder.glob("*.md")):
            meta, body = split_front_matter(path.read_text(encoding="utf-8"))
            memory: dict[str, Any] = {k: meta[k] for k in PASSED_THROUGH if k in meta}
            memories.append(
                {
                    **memory,
                    "id": meta["id"],
                    "type": meta["type"],
                    "title": meta["title"],
                    "tags": list(meta.get("tags") or []),
                    "body": body,
                    "scope": scope,
                    "status": meta.get("status", "active"),
                    "supersedes": list(meta.get("supersedes") or []),
                }
            )
    return memories


def own_queries(split: str | None, fixture: Path = FIXTURE) -> list[Query]:
    """fixtures/eval's queries (eval.dataset's reader): those of `split`, or all."""
    return [q for q in load_queries(fixture / "queries.jsonl") if split is None or q.split == split]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--all", action="store_true", help="every query, not only the test split")
    parser.add_argument("--split", default="test", help="the split to run (default: test)")
    parser.add_argument("--only", action="append", default=[], help="servers whose name starts so")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    queries = own_queries(None if args.all else args.split)
    modes: tuple[str | None, ...] = ("0", "1") if available("") else ("0",)
    with tempfile.TemporaryDirectory(prefix="engram-peers-") as scratch:
        name = "fixtures/eval" + ("" if args.all else f":{args.split}")
        rows = measure(name, own_memories(), queries, Path(scratch), modes, args.only)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
