"""The evaluation set (fixtures/eval/) and the code of `make eval` (eval/): metrics on
hand-computed examples, the set loads as a real store, and every label names a live memory."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pytest

from eval.dataset import (
    FIXTURE,
    KINDS,
    SPLITS,
    assign_splits,
    build_tiny,
    build_workspace,
    load_queries,
    load_tasks,
    load_tiny,
)
from eval.metrics import answers, ndcg_at, recall_at, reciprocal_rank
from eval.overlap import LINES, by_kind, report
from eval.run import summarise
from store.files.memory import Memory, parse_memory
from store.store import Store

# --- metrics ---------------------------------------------------------------------------------


def test_recall_counts_answers_only() -> None:
    labels = {"a": 2, "b": 2, "c": 1}
    assert recall_at(["x", "a", "c", "y", "z", "b"], labels, 5) == 0.5
    assert recall_at(["x", "a", "c", "y", "z", "b"], labels, 10) == 1.0
    assert recall_at([], labels, 5) == 0.0


def test_without_a_grade_2_every_labelled_id_is_an_answer() -> None:
    assert answers({"a": 1, "b": 1}) == {"a", "b"}
    assert recall_at(["b"], {"a": 1, "b": 1}, 5) == 0.5


def test_reciprocal_rank_of_the_first_answer() -> None:
    labels = {"a": 2, "c": 1}
    assert reciprocal_rank(["c", "x", "a"], labels) == pytest.approx(1 / 3)
    assert reciprocal_rank(["a"], labels) == 1.0
    assert reciprocal_rank(["c", "x"], labels) == 0.0


def test_ndcg_by_hand() -> None:
    labels = {"a": 2, "b": 1}
    assert ndcg_at(["a", "b"], labels, 10) == 1.0
    # ranked b, x, a: dcg = 1/log2(2) + 3/log2(4) = 2.5; ideal = 3/1 + 1/log2(3)
    expected = 2.5 / (3 + 1 / math.log2(3))
    assert ndcg_at(["b", "x", "a"], labels, 10) == pytest.approx(expected)
    assert ndcg_at(["x", "y"], labels, 10) == 0.0
    assert ndcg_at(["b", "a"], labels, 1) == pytest.approx(1 / 3)


def test_summary() -> None:
    rows = [
        {"recall@5": 1.0, "recall@10": 1.0, "ndcg@10": 1.0, "mrr": 1.0, "ms": 2.0, "ranked": ["a"]},
        {"recall@5": 0.0, "recall@10": 0.0, "ndcg@10": 0.0, "mrr": 0.0, "ms": 4.0, "ranked": []},
    ]
    assert summarise(rows) == {
        "queries": 2,
        "recall@5": 0.5,
        "recall@10": 0.5,
        "ndcg@10": 0.5,
        "mrr": 0.5,
        "ms_median": 3.0,
        "zero_hits": 1,
    }


# --- the set ---------------------------------------------------------------------------------


def _memories() -> dict[str, Memory]:
    found = {}
    for scope, folder in (("project", FIXTURE / "memory"), ("user", FIXTURE / "user" / "memory")):
        for path in sorted(folder.glob("*.md")):
            assert path.stem not in found, f"{path.stem} is in both scopes"
            found[path.stem] = parse_memory(path.read_bytes(), file_id=path.stem, scope=scope, tier="durable")
    return found


def test_the_set_loads_as_a_store_with_no_problem(tmp_path: Path) -> None:
    workspace, home = build_workspace(tmp_path)
    store = Store(workspace, env={"ENGRAM_HOME": str(home), "ENGRAM_VECTORS": "0"})
    view = store.view()
    assert view.problems == ()
    assert len(view.durable) == len(_memories()) >= 200
    assert {m.scope for m in view.durable.values()} == {"project", "user"}
    assert {m.type for m in view.durable.values()} >= {
        "rule",
        "decision",
        "convention",
        "fact",
        "procedure",
        "gotcha",
        "preference",
    }
    assert all(p.suffix == ".md" for p in FIXTURE.rglob("memory/*")), "the fixture itself is never written"


def test_queries_are_many_balanced_and_labelled_with_live_memories() -> None:
    memories = _memories()
    queries = load_queries()
    assert len(queries) >= 120
    assert len({q.id for q in queries}) == len(queries)
    assert len({q.text for q in queries}) == len(queries)
    counts = Counter(q.kind for q in queries)
    assert set(counts) == set(KINDS)
    assert max(counts.values()) <= 1.5 * min(counts.values()), counts
    for query in queries:
        assert query.labels and set(query.labels.values()) <= {1, 2}, query.id
        assert 2 in query.labels.values(), f"{query.id} has no answer"
        for memory_id, _ in query.labels.items():
            assert memory_id in memories, f"{query.id} names {memory_id}, which does not exist"
            assert memories[memory_id].active, f"{query.id} labels superseded {memory_id}"


def test_hard_cases_are_present() -> None:
    memories = _memories()
    superseded = {k: m for k, m in memories.items() if not m.active}
    assert len(superseded) >= 8
    for memory_id, memory in superseded.items():
        successor = memory.meta["superseded_by"]
        assert memories[successor].active, f"{memory_id} is superseded by a live memory"
    answered = {m for q in load_queries() for m, grade in q.labels.items() if grade == 2}
    replaced = {m.meta["superseded_by"] for m in superseded.values()}
    assert len(replaced & answered) >= 8, "queries reach the memories that replaced old ones"
    # near-duplicates: one template, one identifier or number apart; only the right one is the answer
    for pair in (
        ("orders-db-pool-size", "billing-db-pool-size"),
        ("orders-statement-timeout", "billing-statement-timeout"),
        ("staging-db-host-orders", "staging-db-host-billing"),
        ("public-api-rate-limit", "partner-api-rate-limit"),
        ("node-version-notifier", "node-version-web"),
    ):
        for one, other in (pair, pair[::-1]):
            assert any(q.labels.get(one) == 2 and q.labels.get(other, 0) < 2 for q in load_queries()), pair


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def test_keyword_and_identifier_queries_share_words_with_their_answer() -> None:
    memories = _memories()
    for query in load_queries():
        if query.kind == "paraphrase":
            continue
        for memory_id, grade in query.labels.items():
            if grade == 2:
                memory = memories[memory_id]
                text = f"{memory.title} {' '.join(memory.tags)} {memory.body}"
                assert _words(query.text) & _words(text), f"{query.id}: no word of it in {memory_id}"


def test_tiny_stores_cover_one_to_five_memories(tmp_path: Path) -> None:
    stores = load_tiny()
    assert sorted(len(s.memories) for s in stores) == [1, 2, 3, 4, 5]
    for tiny in stores:
        workspace, home = build_tiny(tmp_path, tiny)
        view = Store(workspace, env={"ENGRAM_HOME": str(home)}).view()
        assert view.problems == () and len(view.durable) == len(tiny.memories)
        for memory in tiny.memories:  # each memory is asked for by its own words
            assert any(q.labels == {memory["id"]: 2} for q in tiny.queries), memory["id"]
        shared = [q for q in tiny.queries if len(q.labels) > 1 or q.text.isalpha()]
        assert shared, f"{tiny.name} has no query by a word several memories share"
        for query in shared:
            holding = {
                m["id"]
                for m in tiny.memories
                if query.text.lower() in f"{m['title']} {' '.join(m['tags'])} {m['body']}".lower()
            }
            assert holding == set(query.labels), query.id
            assert 2 * len(holding) >= len(tiny.memories), f"{query.id}: the word is in half of them or more"


def test_overlap_counts_the_query_s_content_words_its_answer_holds() -> None:
    """eval/overlap.py: stop words out, stems in; the share is of the query's words."""
    from eval.overlap import overlap

    assert overlap("making the shop usable with a keyboard", ["Make every page usable by keyboard"]) == 0.75
    assert overlap("the and of", ["anything"]) == 0.0
    assert overlap("screen reader labels", ["Terraform plan before apply"]) == 0.0


def test_the_overlap_line_fails_a_kind_over_it() -> None:
    from eval.overlap import main

    assert main(["--max", "paraphrase=1.0"]) == 0
    assert main(["--max", "keyword=0.0"]) == 1


def test_one_query_over_the_line_fails_even_when_the_mean_is_under() -> None:
    found = {"paraphrase": {"p1": 0.0, "p2": 0.0, "p3": 0.2}, "keyword": {"k1": 1.0}}
    rows, over = report(found, {"paraphrase": 0.15})
    assert over == ["paraphrase p3: overlap 0.200 is over 0.15"]
    assert rows == [
        "overlap keyword     n   1  mean 1.000  max 1.000",
        "overlap paraphrase  n   3  mean 0.067  max 0.200, 1 over 0.15",
    ]
    assert report({"paraphrase": {"p1": 0.15}}, {"paraphrase": 0.15})[1] == []


# --- honest paraphrases, splits and tasks ----------------------------------------------------


def test_every_paraphrase_query_shares_at_most_the_line_with_its_answers() -> None:
    shares = by_kind(load_queries(), _memories())["paraphrase"]
    assert len(shares) >= 90
    over = {i: round(share, 3) for i, share in shares.items() if share > LINES["paraphrase"]}
    assert over == {}, f"paraphrase queries over {LINES['paraphrase']}: {over}"


def test_every_query_and_task_has_a_split_and_each_split_holds_every_kind() -> None:
    queries = load_queries() + [q for tiny in load_tiny() for q in tiny.queries]
    tasks = load_tasks()
    assert all(q.split in SPLITS for q in queries) and all(t.split in SPLITS for t in tasks)
    for kind in (*KINDS, "tiny"):
        per = Counter(q.split for q in queries if q.kind == kind)
        assert set(per) == set(SPLITS), kind
        assert abs(per["tune"] - per["test"]) <= 1, (kind, per)  # stratified: half each
        ids = [q.id for q in queries if q.kind == kind]
        assert assign_splits(ids) == {q.id: q.split for q in queries if q.kind == kind}, kind
    per_task = Counter(t.split for t in tasks)
    assert set(per_task) == set(SPLITS) and abs(per_task["tune"] - per_task["test"]) <= 1


def test_tasks_are_many_and_labelled_with_live_memories() -> None:
    memories = _memories()
    tasks = load_tasks()
    assert len(tasks) >= 60
    assert len({t.id for t in tasks}) == len(tasks) and len({t.text for t in tasks}) == len(tasks)
    for task in tasks:
        assert 2 in task.labels.values() and set(task.labels.values()) <= {1, 2}, task.id
        for memory_id in task.labels:
            assert memory_id in memories, f"{task.id} names {memory_id}, which does not exist"
            assert memories[memory_id].active, f"{task.id} labels superseded {memory_id}"
