"""eval/run.py's drop rule (one query's worth per mode, split and kind) on made-up figures, and
eval/load_eval.py on a real tiny store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eval.dataset import Task, build_tiny, load_tiny
from eval.load_eval import BUDGET, load_task, summarise
from eval.run import allowed, drops
from store.store import Store


def _kind(n: int, recall: float, mrr: float) -> dict[str, Any]:
    return {"queries": n, "recall@5": recall, "recall@10": 1.0, "ndcg@10": mrr, "mrr": mrr}


def _run(split: str, kind: str, figures: dict[str, Any], mode: str = "bm25") -> dict[str, Any]:
    return {"modes": {mode: {"splits": {split: {"kinds": {kind: figures}}}, "load": {}}}}


def test_recall_may_fall_by_one_query_of_that_kind_in_that_split() -> None:
    before = _run("test", "paraphrase", _kind(40, 0.5, 0.5))
    assert drops(_run("test", "paraphrase", _kind(40, 0.475, 0.5)), before) == []  # one of 40
    found = drops(_run("test", "paraphrase", _kind(40, 0.45, 0.5)), before)  # two of 40
    assert found == ["bm25 test paraphrase recall@5: 0.5000 -> 0.4500 (n 40, allowed 0.0250)"]
    # the same fall over 10 queries is less than one query's worth
    before10 = _run("tune", "keyword", _kind(10, 0.9, 0.9))
    assert drops(_run("tune", "keyword", _kind(10, 0.81, 0.9)), before10) == []


def test_other_metrics_may_fall_by_the_same_share_of_their_value() -> None:
    assert allowed("recall@5", 0.8, 20) == 0.05
    assert allowed("mrr", 0.8, 20) == pytest.approx(0.04)
    before = _run("test", "identifier", _kind(20, 1.0, 0.8))
    assert drops(_run("test", "identifier", _kind(20, 1.0, 0.77)), before) == []  # 0.03 < 0.04
    found = drops(_run("test", "identifier", _kind(20, 1.0, 0.75)), before)
    assert [line.split(":")[0] for line in found] == [
        "bm25 test identifier ndcg@10",
        "bm25 test identifier mrr",
    ]


def test_splits_and_modes_are_compared_apart() -> None:
    before = {
        "modes": {
            "bm25": {
                "splits": {
                    "tune": {"kinds": {"all": _kind(100, 0.9, 0.9)}},
                    "test": {"kinds": {"all": _kind(100, 0.6, 0.6)}},
                },
                "load": {
                    "test": {"tasks": 30, "answer_body": 0.8, "relevant_body": 0.9, "answer_shown": 0.9}
                },
            },
            "bm25+vectors": "not installed",
        }
    }
    now = {
        "modes": {
            # the test split's 0.6 would pass, but it is the tune split that fell
            "bm25": {
                "splits": {"tune": {"kinds": {"all": _kind(100, 0.6, 0.9)}}},
                "load": {
                    "test": {"tasks": 30, "answer_body": 0.7, "relevant_body": 0.9, "answer_shown": 0.9}
                },
            },
            # a mode the baseline could not run is held to its bm25 figures
            "bm25+vectors": {"splits": {"test": {"kinds": {"all": _kind(100, 0.5, 0.6)}}}, "load": {}},
        }
    }
    found = [line.split(" (")[0] for line in drops(now, before)]
    assert found == [
        "bm25 tune all recall@5: 0.9000 -> 0.6000",
        "bm25 test load answer_body: 0.8000 -> 0.7000",
        "bm25+vectors test all recall@5: 0.6000 -> 0.5000",
    ]


def test_the_public_row_takes_part_in_the_drop_check() -> None:
    before = {
        "modes": {"bm25": {"splits": {}, "load": {}, "public": {"kinds": {"public": _kind(50, 0.8, 0.8)}}}}
    }
    now = {
        "modes": {"bm25": {"splits": {}, "load": {}, "public": {"kinds": {"public": _kind(50, 0.7, 0.8)}}}}
    }
    assert [line.split(":")[0] for line in drops(now, before)] == ["bm25 public public recall@5"]
    not_built = {"modes": {"bm25": {"splits": {}, "load": {}, "public": "not built"}}}
    assert drops(not_built, before) == []


def test_a_task_s_answer_arrives_as_a_body_through_the_store_s_load(tmp_path: Path) -> None:
    tiny = next(t for t in load_tiny() if len(t.memories) == 2)
    workspace, home = build_tiny(tmp_path, tiny)
    store = Store(workspace, env={"ENGRAM_HOME": str(home), "ENGRAM_VECTORS": "0"})
    wanted = tiny.memories[0]
    task = Task("t1", "test", wanted["title"], {wanted["id"]: 2})
    row = load_task(store, task)
    assert wanted["id"] in row["bodies"] and row["answer_body"] == 1.0 == row["relevant_body"]
    assert 0 < row["tokens"] <= BUDGET
    missing = load_task(store, Task("t2", "test", wanted["title"], {"not-there": 2}))
    assert missing["answer_body"] == 0.0 == missing["answer_shown"]
    summary = summarise([row, missing])
    assert (summary["tasks"], summary["answer_body"], summary["relevant_body"]) == (2, 0.5, 0.5)
