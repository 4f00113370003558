"""eval/run.py's drop rule (one query's worth per mode, split and kind) on made-up figures, its
wait for a finished vector build and its check that every query used the vector signal, and
eval/load_eval.py on a real tiny store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from eval.dataset import Task, build_tiny, load_tiny
from eval.load_eval import BUDGET, load_task, summarise
from eval.run import (
    BASELINE,
    allowed,
    ask,
    drops,
    open_store,
    run_queries,
    vectors_env,
    vectors_missing,
    wait_for_vectors,
    without_vectors,
)
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


def test_the_baseline_file_reads_and_a_public_entry_is_not_compared() -> None:
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert drops(baseline, baseline) == []  # its "public" entry (a string) is passed over
    before = {
        "modes": {"bm25": {"splits": {}, "load": {}, "public": {"kinds": {"public": _kind(50, 0.8, 0.8)}}}}
    }
    now = {"modes": {"bm25": {"splits": {}, "load": {}, "public": "not built"}}}
    assert drops(now, before) == []  # no public set is measured: nothing of one is compared


def test_queries_answered_by_bm25_alone_are_named() -> None:
    rows = [
        {"id": "q1", "backends": ("bm25", "vectors:all-MiniLM-L6-v2-int8")},
        {"id": "q2", "backends": ("bm25",)},
        {"id": "q3", "backends": ()},
    ]
    assert without_vectors(rows) == ["q2", "q3"]


class _Building:
    """A store whose vector build ends after `polls` looks at its state."""

    def __init__(self, polls: int) -> None:
        self.polls = polls
        self.seen: list[str] = []
        self.finder = self  # the store's search side, where the vector state is asked

    def vector_state(self) -> dict[str, Any]:
        state = "loading" if not self.seen else "building" if len(self.seen) < self.polls else "ready"
        self.seen.append(state)
        return {"state": state}


def test_the_vector_mode_waits_for_the_build_to_finish() -> None:
    store = _Building(polls=3)
    assert wait_for_vectors(cast(Store, store), timeout=30)["state"] == "ready"
    assert store.seen == ["loading", "building", "building", "ready"]
    stuck = _Building(polls=10**6)
    assert wait_for_vectors(cast(Store, stuck), timeout=0.3)["state"] == "building"


def test_a_bm25_store_opens_with_its_vectors_off(tmp_path: Path) -> None:
    tiny = next(t for t in load_tiny() if len(t.memories) == 2)
    workspace, home = build_tiny(tmp_path, tiny)
    with vectors_env(False) as env:
        store = open_store(workspace, home, env)
        assert store.finder.vector_state() == {"state": "off"}
        ranked, backends, _ = ask(store, tiny.memories[0]["title"])
    assert backends == ("bm25",) and ranked[0] == tiny.memories[0]["id"]


@pytest.mark.skipif(vectors_missing() != "", reason="the vectors extra is not installed")
def test_a_vector_store_answers_every_query_with_its_vectors_once_opened(tmp_path: Path) -> None:
    tiny = max(load_tiny(), key=lambda t: len(t.memories))
    workspace, home = build_tiny(tmp_path, tiny)
    with vectors_env(True) as env:
        store = open_store(workspace, home, env)
        assert store.finder.vector_state()["state"] == "ready"
        rows = run_queries(store, tiny.queries)
    assert rows and without_vectors(rows) == []


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
