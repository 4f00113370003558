"""No proposal is lost to a concurrent writer (issue 20): several agent sessions in one
repository each propose and at once commit; every token they were given still commits.

8 processes propose and commit at the same instant. The pending file holds the newest 50
records; before this was fixed, the used records of writers in the same second evicted
proposals another process had not committed yet, and its commit was refused as
ENGRAM_TOKEN_UNKNOWN (7 of 80 with 4 processes). `ENGRAM_STRESS_SCALE=10` (long mode) makes it
8 × 50, each committed; the default is 8 × 10, already past the cap.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from store.store import Store
from store.write import review
from tests.support.writers import STRESS_SCALE, finish, start_writers

PROCESSES = 8
PER_PROCESS = 50 if STRESS_SCALE > 1 else 10

WRITER = textwrap.dedent(
    """
    import json, sys, time, uuid
    from pathlib import Path
    from store.errors import StoreError
    from store.store import Store
    from store.write import commits, proposals

    workspace, worker, count, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    store = Store(workspace)
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.002)
    result = {"written": 0, "refused": [], "dropped": 0}
    for n in range(count):
        word = uuid.uuid4().hex
        raw = [{"type": "fact", "title": f"Writer {worker} fact {n} {word[:10]}", "body": f"Token {word}."}]
        entries, redactions = proposals.draft(store, raw)
        preview = proposals.store_proposal(store, entries, redactions, "save")
        result["dropped"] += preview.dropped
        try:
            result["written"] += len(commits.commit(store, preview.token, "all").written)
        except StoreError as exc:
            result["refused"].append(exc.code)
    print(json.dumps(result))
    """
)


@pytest.mark.timeout(60 * STRESS_SCALE)
def test_eight_writers_proposing_and_committing_at_once_lose_no_proposal(
    workspace: Path, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    env = {**os.environ, "ENGRAM_LOCK_TIMEOUT": "60"}
    procs = start_writers(
        WRITER, [[str(workspace), str(i), str(PER_PROCESS), str(go)] for i in range(PROCESSES)], env
    )
    go.touch()
    results = finish(procs, timeout=55 * STRESS_SCALE)
    assert [code for r in results for code in r["refused"]] == []
    assert sum(r["dropped"] for r in results) == 0
    assert sum(r["written"] for r in results) == PROCESSES * PER_PROCESS
    assert review.verify(Store(workspace))["pending"] == 0
