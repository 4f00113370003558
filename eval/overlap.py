"""How many of a query's content words its answer already holds, per query kind.

A paraphrase query measures meaning only when it shares few words with the memory it targets:
on engram's own set they share 43% on average, on a held-out set written without engram's code
11%, and recall on the two differs accordingly (issue 21). Content words are search's own
(store.search.tokenize: lower-case, stop words out, identifiers split) and stemmed; the overlap of
a query is the share of its content words found among its answers' (grade 2) title, tags and
body words.

    .venv/bin/python eval/overlap.py [--max paraphrase=0.15]

prints the mean and the largest overlap per kind, and exits 1 when a kind's mean is over its
`--max` line.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from eval.dataset import FIXTURE, Query, load_queries  # noqa: E402
from store.files.memory import Memory, parse_memory  # noqa: E402
from store.search.tokenize import stem, tokenize  # noqa: E402


def content_words(text: str) -> set[str]:
    return {stem(token) for token in tokenize(text)}


def overlap(query: str, answers: Iterable[str]) -> float:
    """The share of `query`'s content words that the answers' text holds (0 for a query of none)."""
    wanted = content_words(query)
    if not wanted:
        return 0.0
    held: set[str] = set()
    for text in answers:
        held |= content_words(text)
    return len(wanted & held) / len(wanted)


def memory_text(memory: Memory) -> str:
    return f"{memory.title} {' '.join(memory.tags)} {memory.body}"


def by_kind(queries: Sequence[Query], memories: Mapping[str, Memory]) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for query in queries:
        answers = [
            memory_text(memories[i]) for i, grade in query.labels.items() if grade == 2 and i in memories
        ]
        found.setdefault(query.kind, []).append(overlap(query.text, answers))
    return found


def fixture_memories(fixture: Path = FIXTURE) -> dict[str, Memory]:
    memories = {}
    for scope, folder in (("project", fixture / "memory"), ("user", fixture / "user" / "memory")):
        for path in sorted(folder.glob("*.md")):
            memories[path.stem] = parse_memory(
                path.read_bytes(), file_id=path.stem, scope=scope, tier="durable"
            )
    return memories


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--max", action="append", default=[], metavar="KIND=SHARE", help="fail over this mean"
    )
    args = parser.parse_args(argv)
    lines = dict(item.split("=", 1) for item in args.max)
    found = by_kind(load_queries(), fixture_memories())
    over = []
    print(f"{'kind':<12} {'n':>4} {'mean':>6} {'max':>6}")
    for kind, shares in sorted(found.items()):
        mean = statistics.fmean(shares)
        print(f"{kind:<12} {len(shares):>4} {mean:>6.3f} {max(shares):>6.3f}")
        if kind in lines and mean > float(lines[kind]):
            over.append(f"{kind}: mean overlap {mean:.3f} is over {float(lines[kind]):.3f}")
    for line in over:
        print(line, file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
