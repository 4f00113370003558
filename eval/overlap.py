"""How many of a query's content words its answer already holds, per query kind.

A paraphrase query measures meaning only when it shares few words with the memory it targets:
on engram's own set they shared 43% on average, on a held-out set written without engram's code
11%, and recall on the two differed accordingly (issue 21). Content words are search's own
(store.search.tokenize: lower-case, stop words out, identifiers split) and stemmed; the overlap of
a query is the share of its content words found among its answers' (grade 2) title, tags and
body words. The task descriptions of fixtures/eval/tasks.jsonl are measured too (kind `task`,
no line: a ticket title names what it is about).

    .venv/bin/python eval/overlap.py [--max paraphrase=0.15]

prints one line per kind (mean, largest, and how many queries are over the kind's line), and
exits 1 when any query of a kind given `--max` is over it: the line holds per query, not only
for the mean. `make eval` runs it first (eval/run.py, `LINES`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from eval.dataset import FIXTURE, Query, Task, load_queries, load_tasks  # noqa: E402
from store.files.memory import Memory, parse_memory  # noqa: E402
from store.search.tokenize import stem, tokenize  # noqa: E402

LINES = {"paraphrase": 0.15}
"""The largest share of its content words a query of the kind may share with its answers."""


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


def by_kind(queries: Sequence[Query | Task], memories: Mapping[str, Memory]) -> dict[str, dict[str, float]]:
    """Per kind (`task` for a task), each query's id and overlap with its answers."""
    found: dict[str, dict[str, float]] = {}
    for query in queries:
        answers = [
            memory_text(memories[i]) for i, grade in query.labels.items() if grade == 2 and i in memories
        ]
        kind = query.kind if isinstance(query, Query) else "task"
        found.setdefault(kind, {})[query.id] = overlap(query.text, answers)
    return found


def fixture_memories(fixture: Path = FIXTURE) -> dict[str, Memory]:
    memories = {}
    for scope, folder in (("project", fixture / "memory"), ("user", fixture / "user" / "memory")):
        for path in sorted(folder.glob("*.md")):
            memories[path.stem] = parse_memory(
                path.read_bytes(), file_id=path.stem, scope=scope, tier="durable"
            )
    return memories


def report(
    found: Mapping[str, Mapping[str, float]], lines: Mapping[str, float]
) -> tuple[list[str], list[str]]:
    """One line per kind, and one line per query over its kind's line (empty: none is)."""
    rows, over = [], []
    for kind, shares in sorted(found.items()):
        line = lines.get(kind)
        above = sorted(i for i, share in shares.items() if line is not None and share > line)
        count = f", {len(above)} over {line:.2f}" if line is not None else ""
        rows.append(
            f"overlap {kind:<11} n {len(shares):>3}  mean {statistics.fmean(shares.values()):.3f}"
            f"  max {max(shares.values()):.3f}{count}"
        )
        over += [f"{kind} {i}: overlap {shares[i]:.3f} is over {line:.2f}" for i in above]
    return rows, over


def measure(lines: Mapping[str, float] = LINES, fixture: Path = FIXTURE) -> tuple[list[str], list[str]]:
    """`report` on the fixture's queries and tasks."""
    queries: list[Query | Task] = [
        *load_queries(fixture / "queries.jsonl"),
        *load_tasks(fixture / "tasks.jsonl"),
    ]
    return report(by_kind(queries, fixture_memories(fixture)), lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--max", action="append", default=[], metavar="KIND=SHARE", help="fail when a query is over"
    )
    args = parser.parse_args(argv)
    lines = {kind: float(share) for kind, share in (item.split("=", 1) for item in args.max)}
    rows, over = measure(lines)
    print("\n".join(rows))
    for line in over:
        print(line, file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
