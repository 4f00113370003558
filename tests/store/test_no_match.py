"""Search says "no match" when no memory answers (store.search.confidence): a memory that shares
one ordinary word with an off-topic question is not a hit, in search, the tool, the CLI and
load; a memory that holds the query's words still is. With the MiniLM signal, an off-topic
question gets no match while a reworded one keeps its answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram_mcp.cli import main as cli
from engram_mcp.ops import read_ops
from store.search.vector_extra import minilm_installed
from store.store import Store
from tests.support.store_helpers import write_memory

MEMORIES = [
    ("deploy-recipe", "The deploy recipe for the orders service", "Tag, open the bump PR, let ArgoCD sync."),
    ("invoice-rounding", "Invoice rounding", "Round invoice totals half-even to the cent after tax."),
    (
        "tenant-api-keys",
        "Never log tenant API keys",
        "Redact the Authorization header before logging a request.",
    ),
    (
        "celery-retries",
        "Celery tasks retry with backoff",
        "Every task sets max_retries=5 and exponential backoff.",
    ),
    (
        "pnpm-only",
        "Use pnpm, never npm",
        "The front end's lockfile is pnpm-lock.yaml; npm install breaks it.",
    ),
]
OFF_TOPIC = [
    "banana smoothie recipe",
    "how many vacation days carry over to next year",
    "python snake terrarium humidity",
]


def _store(root: Path) -> Store:
    for memory_id, title, body in MEMORIES:
        write_memory(root, memory_id, title=title, body=body + "\n", type="rule")
    return Store(root)


def test_an_off_topic_question_gets_no_match_and_why(empty_workspace: Path) -> None:
    store = _store(empty_workspace)
    for query in OFF_TOPIC:
        result = store.find(query)
        assert result.entries == [], query
        assert result.no_match
    said = store.find("banana smoothie recipe").no_match
    assert said.startswith("the closest memory holds ") and "of its words' weight" in said


def test_a_memory_holding_the_querys_words_is_still_a_hit(empty_workspace: Path) -> None:
    store = _store(empty_workspace)
    assert [e.id for e in store.find("deploy recipe").entries] == ["deploy-recipe"]
    assert [e.id for e in store.find("invoice rounding half-even").entries][0] == "invoice-rounding"
    assert store.find("invoice rounding").no_match == ""


def test_the_tool_and_the_cli_say_no_match_with_the_reason(
    empty_workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(empty_workspace).close()
    outcome = read_ops.search(Store(empty_workspace), {"query": "banana smoothie recipe"})
    assert outcome.data["entries"] == [] and outcome.data["no_match"].startswith("the closest memory")
    assert "No match: the closest memory holds" in outcome.text
    monkeypatch.chdir(empty_workspace)
    assert cli.main(["search", "banana smoothie recipe", "--json"]) == 0
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["data"]["entries"] == [] and envelope["data"]["no_match"]


def test_load_never_gives_a_body_for_a_task_nothing_answers(empty_workspace: Path) -> None:
    """The store fits the budget: every memory is shown, as a card, none as a body."""
    store = _store(empty_workspace)
    result, _ = store.load("banana smoothie recipe", budget=2000)
    assert result.body_keys == []
    assert sorted(result.card_ids) == sorted(m[0] for m in MEMORIES)
    answered, _ = store.load("change the invoice rounding", budget=2000)
    assert answered.body_keys[0] == "invoice-rounding"


needs_minilm = pytest.mark.skipif(not minilm_installed(), reason="the minilm extra is not installed")


@needs_minilm
def test_with_minilm_off_topic_gets_no_match_and_a_reworded_question_keeps_its_answer(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ENGRAM_VECTORS", raising=False)
    store = _store(empty_workspace)
    store.warm()
    assert store.finder.vector_state()["state"] == "ready"
    for query in OFF_TOPIC:
        result = store.find(query)
        assert result.backends == ("bm25", "vectors:all-MiniLM-L6-v2-int8")
        assert result.entries == [], (query, [e.id for e in result.entries])
        assert "near it in meaning" in result.no_match
    reworded = store.find("are customer credentials allowed in our log output")
    assert reworded.entries and reworded.entries[0].id == "tenant-api-keys"
