"""Verdicts that see a rule said again in other words (near-copies were written as ADD): with
the vector signal on, the candidate's cosine with each pooled memory counts beside the words,
on the bands store.propose.verdicts.MEANING_BANDS measured for MiniLM, and the pool holds the
memories nearest by meaning. The same bands find the pairs of the near-duplicates page.

Run with the real all-MiniLM-L6-v2 model, loaded once for the module; skipped only when the
`minilm` extra is not installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from store.propose.near_duplicates import NEIGHBOURS, meaning_neighbours, near_duplicates
from store.search.embedders import Model, windows
from store.store import Store
from store.write import proposals
from tests.support.meaning import with_minilm
from tests.support.store_helpers import write_memory

pytestmark = with_minilm

SUBJECTS: dict[str, tuple[str, str, str]] = {
    # id: (the memory, the same rule in other words, another rule about the same thing)
    "failed-logins": (
        "Log every failed login attempt",
        "Every unsuccessful login attempt is logged",
        "Lock an account after five failed login attempts",
    ),
    "postgres": (
        "Use Postgres for persistent data",
        "Persistent data is stored in PostgreSQL",
        "Use Redis for session data",
    ),
    "composition": (
        "Prefer composition over inheritance",
        "Favor composition rather than inheritance",
        "Prefer dataclasses over plain dictionaries",
    ),
    "utc": (
        "Store timestamps in UTC",
        "All timestamps are stored as UTC",
        "Show timestamps in the user's local time zone",
    ),
    "tenant-keys": (
        "Never log tenant API keys",
        "Don't write tenant API keys to the logs",
        "Rotate tenant API keys every 90 days",
    ),
    "https": (
        "Use HTTPS for every external call",
        "External calls always go over HTTPS",
        "Retry failed HTTP requests three times",
    ),
    "regression-tests": (
        "Write a regression test for every fixed bug",
        "Every bug fix comes with a regression test",
        "Run the full test suite before every release",
    ),
    "migrations-first": (
        "Run the database migrations before starting the server",
        "Run DB migrations before you start the server",
        "Migrations must not lock large tables",
    ),
}


def _rule(root: Path, memory_id: str, text: str, **meta: Any) -> None:
    write_memory(root, memory_id, title=text, body=text + ".\n", type="rule", **meta)


def _subjects(root: Path) -> Store:
    for memory_id, (text, _, _) in SUBJECTS.items():
        _rule(root, memory_id, text)
    _rule(root, "invoice-rounding", "Invoice totals are rounded half-even to the cent")
    return _ready(Store(root))


def _ready(store: Store) -> Store:
    """Vectors built off the request path (Store.warm), as a server's warm-up does."""
    store.finder.answered.set()  # no first search to wait for: warm loads and builds at once
    store.warm()
    assert store.finder.vector_state()["state"] == "ready"
    return store


def _verdicts(store: Store, *texts: str) -> list[tuple[str, str | None]]:
    entries, _ = proposals.draft(store, [{"type": "rule", "title": t, "body": t + "."} for t in texts])
    return [(e.verdict.kind, e.verdict.target) for e in entries]


@pytest.mark.parametrize("memory_id", sorted(SUBJECTS))
def test_a_rule_in_other_words_is_judged_the_memory_it_restates_and_another_rule_is_add(
    empty_workspace: Path, memory_id: str
) -> None:
    """The bug: reworded near-copies of a memory were proposed as ADD (the words' measure alone
    stays under the related band for each of these). A rule about the same subject that says
    something else is still ADD (engram's own bands: an UPDATE would overwrite the memory)."""
    store = _subjects(empty_workspace)
    _, reworded, other = SUBJECTS[memory_id]
    (kind, target), added = _verdicts(store, reworded, other)
    assert kind in ("UPDATE", "NOOP") and target == memory_id, reworded
    assert added == ("ADD", None), other


def test_unrelated_rules_are_add(empty_workspace: Path) -> None:
    store = _subjects(empty_workspace)
    unrelated = ("Use pnpm for JavaScript packages", "Every pull request needs two approving reviews")
    assert _verdicts(store, *unrelated) == [("ADD", None), ("ADD", None)]


def test_the_same_rule_in_other_words_is_noop_unless_it_turns_around_or_grows(empty_workspace: Path) -> None:
    """NOOP by meaning needs a candidate that only rewords: the model scores "always" for
    "never" 0.95 and a clause added 0.89, so those are UPDATE, never NOOP (SPEC §4.1)."""
    _rule(empty_workspace, "tenant-keys", "Never log tenant API keys")
    _rule(empty_workspace, "api-port", "The API server listens on port 8080")
    store = _ready(Store(empty_workspace))
    assert _verdicts(
        store,
        "Do not log tenant API keys",
        "Always log tenant API keys",
        "Never log tenant API keys; mask them in error reports too",
        "The API server listens on port 9090",
    ) == [
        ("NOOP", "tenant-keys"),
        ("UPDATE", "tenant-keys"),
        ("UPDATE", "tenant-keys"),
        ("UPDATE", "api-port"),
    ]


def test_a_restatement_bm25_ranks_below_the_pool_is_found_by_meaning(empty_workspace: Path) -> None:
    """The pool holds the memories nearest by meaning: here 30 memories hold every word of the
    candidate, so BM25's best and the memories holding every word are all those, and the one
    memory saying the same thing is among neither."""
    _rule(empty_workspace, "failed-logins", "Log every failed login attempt")
    for n in range(30):
        write_memory(
            empty_workspace,
            f"gateway-{n:02}",
            title=f"Gateway {n} lockouts",
            body=f"Every unsuccessful login attempt is logged by gateway {n} with the lockout count of its region.\n",
        )
    store = _ready(Store(empty_workspace))
    text = "Every unsuccessful login attempt is logged"
    assert "failed-logins" not in {h.memory.id for h in store.finder.lexical.search(f"{text}\n\n{text}.", 20)}
    assert _verdicts(store, text) == [("UPDATE", "failed-logins")]


def test_without_the_vector_signal_verdicts_are_the_words_alone(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Engram's own choice: with ENGRAM_VECTORS=0 (or no extra) nothing changes."""
    monkeypatch.setenv("ENGRAM_VECTORS", "0")
    _rule(empty_workspace, "postgres", "Use Postgres for persistent data")
    assert _verdicts(Store(empty_workspace), "Persistent data is stored in PostgreSQL") == [("ADD", None)]


def test_the_near_duplicates_list_finds_a_rule_said_twice_in_other_words(
    empty_workspace: Path, engram_home: Path
) -> None:
    """The page's pairs use the verdicts' bands: each memory and its rewording is a pair (the
    one a proposal would call NOOP marked a duplicate); another rule on the subject, or a
    rewording in the other scope, is not."""
    for memory_id, (text, reworded, other) in SUBJECTS.items():
        _rule(empty_workspace, memory_id, text, updated="2026-01-01T00:00:00Z")
        _rule(empty_workspace, f"{memory_id}-again", reworded, updated="2026-02-01T00:00:00Z")
        _rule(empty_workspace, f"{memory_id}-other", other)
    staging = empty_workspace.parent / "user-staging"
    _rule(staging, "failed-logins-user", "Every failed login attempt is logged")
    engram_home.parent.mkdir(parents=True, exist_ok=True)
    (staging / ".engram").rename(engram_home)
    store = _ready(Store(empty_workspace))
    config = store.config()
    meaning = meaning_neighbours(store, top=NEIGHBOURS)
    assert meaning is not None
    pairs = near_duplicates(
        list(store.view().durable.values()),
        related=config.dedup_related,
        duplicate=config.dedup_duplicate,
        meaning=meaning,
    )
    found = {frozenset((p.keeper.id, p.other.id)): p.duplicate for p in pairs}
    assert found == {frozenset((m, f"{m}-again")): m == "migrations-first" for m in SUBJECTS}


def test_neighbours_compare_every_window_in_blocks_as_one_product_would(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """VectorIndex.neighbours: a pair's cosine is that of their closest windows, the same when
    the rows are taken a few at a time; each memory's nearest are of its own group."""
    from store.search import vector_rows, vectors

    monkeypatch.setattr(vector_rows, "_NEIGHBOUR_ROWS", 3)
    long = " ".join(f"word{n} about deploy windows" for n in range(60))  # several windows
    for n, text in enumerate(["Deploys run on weekdays only", "No production releases at weekends"]):
        write_memory(empty_workspace, f"short-{n}", title=text, body=text + ".\n")
        write_memory(empty_workspace, f"long-{n}", title=f"Runbook {n}", body=f"{long} {text}.\n")
    store = _ready(Store(empty_workspace))
    found = meaning_neighbours(store, top=3)
    assert found is not None and found[0] == "all-MiniLM-L6-v2-int8"
    model = vectors.load_model("")
    embedded = {m.id: model.embed(windows(m, model.window_words)) for m in store.view().durable.values()}
    assert len(embedded["long-0"]) > 1
    for a, b, cosine in found[1]:
        assert cosine == pytest.approx(float(np.max(embedded[a.id] @ embedded[b.id].T)), abs=2e-3)
    assert len(found[1]) == 6  # four memories, each with its three others: every pair once


def test_a_saved_memory_reuses_the_vectors_its_verdicts_made(
    tmp_path: Path, minilm: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judging a candidate embeds its text as the memory's one window will be; the model keeps
    its recent texts' vectors, so the commit's sync costs no second model run."""
    from store.files.memory import as_embedded
    from store.search import onnx_model

    title, body = "Retry webhooks with backoff", "Webhook deliveries retry  five times\nwith backoff.\n"
    write_memory(tmp_path, "webhook-retries", title=title, body=body, type="rule", tags=["webhooks"])
    memory = next(
        m for m in Store(tmp_path, env={"ENGRAM_HOME": str(tmp_path / "home")}).view().durable.values()
    )
    assert windows(memory) == [as_embedded(title, ["webhooks"], body)]

    runs: list[int] = []
    real = onnx_model.OnnxModel._run

    def counted(self: onnx_model.OnnxModel, rows: list[list[int]], session: Any) -> Any:
        runs.append(len(rows))
        return real(self, rows, session)

    monkeypatch.setattr(onnx_model.OnnxModel, "_run", counted)
    text = f"{windows(memory)[0]} (a text no other test embeds)"
    first = minilm.embed([text])
    again = minilm.embed([text, text])
    assert sum(runs) == 1, "the second embedding of one text ran the model again"
    assert np.array_equal(first[0], again[0]) and np.array_equal(again[0], again[1])
