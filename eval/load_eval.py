"""`load` on task descriptions: does a memory the task needs arrive as a body?

Each task of fixtures/eval/tasks.jsonl (what a developer types as a session objective or a
ticket title) goes through the store's tiered load (`Store.load(task, budget=BUDGET)`, what
`engram load --task ... --budget 2000` prints) on a workspace built from the set. Per task it
records which memories came as a full body and which as a card, and the tokens the answer used.
Per split:

- `answer_body`: the share of tasks where at least one memory labelled 2 arrives as a body;
- `relevant_body`: the same for any labelled memory (2 or 1);
- `answer_shown`: at least one memory labelled 2 is in the answer at all (body or card);
- `tokens_mean`, `tokens_max`: the tokens of the answers.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from eval.dataset import Task
from store.store import Store

BUDGET = 2000
RATES = ("answer_body", "relevant_body", "answer_shown")
"""The figures that are shares of tasks (compared with the baseline, one task's worth)."""


def load_task(store: Store, task: Task, budget: int = BUDGET) -> dict[str, Any]:
    result, task_class = store.load(task.text, budget=budget)
    bodies = [str(row["id"]) for row in result.memories if row.get("tier") == "body"]
    cards = [str(row["id"]) for row in result.memories if row.get("tier") != "body"]
    if not result.memories:  # a result built without rows names its bodies only
        bodies, cards = list(result.body_keys), list(result.card_ids)
    answers = {m for m, grade in task.labels.items() if grade >= 2}
    relevant = {m for m, grade in task.labels.items() if grade > 0}
    return {
        "id": task.id,
        "split": task.split,
        "class": task_class,
        "bodies": bodies,
        "cards": cards,
        "tokens": result.tokens,
        "answer_body": float(bool(answers & set(bodies))),
        "relevant_body": float(bool(relevant & set(bodies))),
        "answer_shown": float(bool(answers & set(bodies + cards))),
    }


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"tasks": 0}
    summary: dict[str, Any] = {"tasks": len(rows)}
    for rate in RATES:
        summary[rate] = round(statistics.fmean(r[rate] for r in rows), 4)
    summary["tokens_mean"] = round(statistics.fmean(r["tokens"] for r in rows), 1)
    summary["tokens_max"] = max(r["tokens"] for r in rows)
    return summary


def run(
    store: Store, tasks: Sequence[Task], splits: Sequence[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Per split, the summary of its tasks; and every task's row."""
    rows = [load_task(store, task) for task in tasks if task.split in splits]
    return {split: summarise([r for r in rows if r["split"] == split]) for split in splits}, rows


def line(split: str, summary: dict[str, Any]) -> str:
    if not summary.get("tasks"):
        return f"load {split:<5} no tasks"
    return (
        f"load {split:<5} n {summary['tasks']:>3}  answer as body {summary['answer_body']:.3f}"
        f"  labelled as body {summary['relevant_body']:.3f}  answer shown {summary['answer_shown']:.3f}"
        f"  tokens mean {summary['tokens_mean']:.0f} max {summary['tokens_max']} (budget {BUDGET})"
    )
