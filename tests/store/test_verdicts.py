"""Verdicts (SPEC §4.1) that see duplicates at every store size, let a changed fact through,
and come out the same for the same input and store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from store.store import Store
from store.write import commits, proposals
from tests.support.store_helpers import write_memory

PORT_BODY = "The staging Postgres listens on port {port} inside the compose network."
ENV_BODY = "Set {name}=1 in the service environment to turn the response cache on."


def _memory(root: Path, memory_id: str, title: str, body: str, **meta: Any) -> None:
    write_memory(root, memory_id, title=title, body=body + "\n", **meta)


def _verdict(store: Store, title: str, body: str, **extra: Any) -> dict[str, Any]:
    entries, _ = proposals.draft(store, [{"type": "fact", "title": title, "body": body, **extra}])
    verdict: dict[str, Any] = entries[0].verdict.record()
    return verdict


def _filled(root: Path, size: int) -> None:
    for n in range(size):
        _memory(root, f"other-{n}", f"Unrelated topic {n}", f"Filler memory number {n} about gardening.")


@pytest.mark.parametrize("others", [0, 1, 2, 4, 60])
def test_the_same_text_again_is_noop_at_every_store_size(empty_workspace: Path, others: int) -> None:
    """Issue 10: the same title and body again is NOOP of that memory, with one memory in the
    store or many (BM25Okapi gave nothing to compare with on a small store: ADD, a `-2` file)."""
    _memory(empty_workspace, "uv-for-envs", "Use uv for environments", "Create environments with uv sync.")
    _filled(empty_workspace, others)
    verdict = _verdict(Store(empty_workspace), "Use uv for environments", "Create environments with uv sync.")
    assert (verdict["kind"], verdict["target"]) == ("NOOP", "uv-for-envs")


def test_an_exact_duplicate_is_seen_even_where_bm25_ranks_it_low(empty_workspace: Path) -> None:
    """The pool always holds memories whose title or body equals the candidate's, whatever
    BM25 thinks of them: here 40 memories repeat the query's words far more often."""
    text = "Sessions expire after thirty minutes idle."
    _memory(empty_workspace, "zz-session-expiry", "Session expiry", text)
    for n in range(40):
        _memory(
            empty_workspace,
            f"noise-{n:02}",
            f"Session expiry session expiry in service {n}",
            "Sessions sessions expire expire after after thirty thirty minutes minutes idle idle "
            f"in service {n}.",
        )
    store = Store(empty_workspace)
    store.view()
    ranked = [h.memory.id for h in store.finder.lexical.search(f"Session expiry\n\n{text}")]
    assert ranked.index("zz-session-expiry") >= 20  # BM25's top 20 alone would miss it
    verdict = _verdict(store, "Session expiry", text)
    assert (verdict["kind"], verdict["target"]) == ("NOOP", "zz-session-expiry")


@pytest.mark.parametrize("others", [0, 3])
def test_a_memory_that_gains_a_clause_is_update_not_noop(empty_workspace: Path, others: int) -> None:
    """Issue 10: a candidate that keeps a memory's text and adds a clause is UPDATE of it (it
    was `NOOP (1.00)`: containment measured from the smaller side)."""
    title, body = "Deploys run from main", "Production deploys run from the main branch after CI passes."
    _memory(empty_workspace, "deploys-from-main", title, body)
    _filled(empty_workspace, others)
    store = Store(empty_workspace)
    for longer in (body + " Tag the release first.", body.replace("passes", "passes twice")):
        verdict = _verdict(store, title, longer)
        assert (verdict["kind"], verdict["target"]) == ("UPDATE", "deploys-from-main"), longer


def test_a_shorter_restatement_that_adds_nothing_is_noop(empty_workspace: Path) -> None:
    """What the candidate adds matters, not what it leaves out: a part of a memory restated
    in its own words (nothing new) is already known."""
    _memory(
        empty_workspace,
        "deploys-from-main",
        "Deploys run from main",
        "Production deploys run from the main branch after CI passes; hotfixes too.",
    )
    verdict = _verdict(
        Store(empty_workspace),
        "Deploys run from main",
        "Production deploys run from the main branch after CI.",
    )
    assert (verdict["kind"], verdict["target"]) == ("NOOP", "deploys-from-main")


def test_a_changed_number_is_update_not_noop(empty_workspace: Path) -> None:
    """`port is 5432` then `port is 5433`: the same fact with a new value, so UPDATE."""
    _memory(empty_workspace, "staging-port", "Staging Postgres port", PORT_BODY.format(port=5432))
    _filled(empty_workspace, 2)
    verdict = _verdict(Store(empty_workspace), "Staging Postgres port", PORT_BODY.format(port=5433))
    assert (verdict["kind"], verdict["target"]) == ("UPDATE", "staging-port")


def test_a_different_identifier_is_a_new_memory_not_noop(empty_workspace: Path) -> None:
    """`FOO_BAR` then `FOO_BAZ` in the same sentence: a fact about another thing, so ADD (an
    UPDATE would overwrite what is known about FOO_BAR)."""
    _memory(empty_workspace, "foo-bar-cache", "Response cache switch", ENV_BODY.format(name="FOO_BAR"))
    _filled(empty_workspace, 2)
    verdict = _verdict(Store(empty_workspace), "Response cache switch", ENV_BODY.format(name="FOO_BAZ"))
    assert verdict["kind"] == "ADD"
    entries, _ = proposals.draft(
        Store(empty_workspace),
        [{"type": "fact", "title": "Response cache switch", "body": ENV_BODY.format(name="FOO_BAZ")}],
    )
    assert entries[0].similar[0].id == "foo-bar-cache"


def test_a_noop_commit_writes_nothing_on_a_one_memory_store(empty_workspace: Path) -> None:
    """Re-saving the only memory: NOOP, and committing it writes no file."""
    _memory(empty_workspace, "only-one", "The only memory", "Builds are reproducible with a lockfile.")
    store = Store(empty_workspace)
    entries, redactions = proposals.draft(
        store,
        [{"type": "fact", "title": "The only memory", "body": "Builds are reproducible with a lockfile."}],
    )
    preview = proposals.store_proposal(store, entries, redactions, "save")
    before = sorted(p.name for p in (empty_workspace / ".engram" / "memory").iterdir())
    report = commits.commit(store, preview.token, "all")
    assert report.written == []
    assert sorted(p.name for p in (empty_workspace / ".engram" / "memory").iterdir()) == before


_DRAFT = """
import json, sys
from pathlib import Path
from store.write import commits
from store.write import proposals
from store.store import Store
raw = json.loads(sys.argv[2])
entries, _ = proposals.draft(Store(Path(sys.argv[1])), raw)
print(json.dumps([[e.verdict.record(), e.similar_rows()] for e in entries]))
"""


def test_same_input_same_store_same_verdicts_whatever_the_hash_seed(empty_workspace: Path) -> None:
    """Verdicts and the similar lists do not depend on set or dict iteration order: two
    processes with different hash seeds give the same answer, ties going to the smaller id."""
    for memory_id in ("twin-b", "twin-a", "twin-c"):
        _memory(empty_workspace, memory_id, "Twin memory", "Identical words in every twin body here.")
    _filled(empty_workspace, 3)
    raw = [
        {"type": "fact", "title": "Twin memory", "body": "Identical words in every twin body here."},
        {
            "type": "fact",
            "title": "Twin memory",
            "body": "Identical words in every twin body here, and more.",
        },
        {"type": "fact", "title": "Unrelated topic 1", "body": "Filler memory number 1 about gardening."},
    ]
    answers = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _DRAFT, str(empty_workspace), json.dumps(raw)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        answers.append(json.loads(done.stdout))
    assert answers[0] == answers[1]
    verdicts = [v for v, _ in answers[0]]
    assert (verdicts[0]["kind"], verdicts[0]["target"]) == ("NOOP", "twin-a")
    assert (verdicts[1]["kind"], verdicts[1]["target"]) == ("UPDATE", "twin-a")
    assert [s["id"] for s in answers[0][0][1]] == ["twin-a", "twin-b", "twin-c"]
