"""Several processes write one workspace at once (SPEC §2 "Concurrency and durability").

The acceptance test: 4 OS processes each propose and commit 20 unrelated memories at the same
time while the `engram` CLI writes too, all at the default lock timeout; none ever sees
ENGRAM_BUSY (issue 9: the polling lock starved one). Afterwards every memory exists, every file
parses, the index lists exactly them, verify is clean. And: a lock held past the timeout gives
ENGRAM_BUSY and changes nothing. `ENGRAM_STRESS_SCALE=10` (long mode) commits 200 each.
"""

from __future__ import annotations

import os
import random
import textwrap
import time
from pathlib import Path

import orjson
import pytest

from engram_mcp.cli.main import main
from store.errors import Busy
from store.files.memory import parse_memory
from store.store import Store
from store.write import commits, proposals, review
from store.write.approvals import MAX_PROPOSALS
from tests.support.snapshots import memory_state
from tests.support.store_helpers import hold_elsewhere, let_go
from tests.support.store_helpers import index_records as _index_records
from tests.support.writers import STRESS_SCALE, finish, save_sessions, start_writers

PROCESSES = 4
PER_PROCESS = 20 * STRESS_SCALE
CLI_RUNS = 5
CLI_LINES = 2

WRITER = textwrap.dedent(
    """
    import json, random, string, sys, time
    from pathlib import Path
    from store.write import commits
    from store.write import proposals
    from store.errors import Busy
    from store.store import Store

    workspace, seed, count, go = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    rng = random.Random(seed)

    def word():
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(9))

    store = Store(workspace)
    print("ready", flush=True)
    while not go.exists():  # start all writers at the same instant
        time.sleep(0.005)
    written, deferred, busy = [], [], []
    for _ in range(count):
        title = " ".join(word() for _ in range(4))
        body = " ".join(word() for _ in range(14)) + "."
        try:
            entries, redactions = proposals.draft(store, [{"type": "fact", "title": title, "body": body}])
            preview = proposals.store_proposal(store, entries, redactions, "save")
            report = commits.commit(store, preview.token, "all")
        except Busy as exc:
            busy.append(exc.message)
            continue
        written += [w["id"] for w in report.written]
        deferred += report.deferred
    print(json.dumps({"written": written, "deferred": deferred, "busy": busy}))
    """
)


@pytest.mark.timeout(90 * STRESS_SCALE)
def test_four_processes_and_the_cli_commit_at_once_without_busy(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    review.accept(Store(workspace))  # the fixture files become recorded, so verify is fully clean after
    assert review.verify(Store(workspace))["ok"] is True
    memory_dir = workspace / ".engram" / "memory"
    fixture_durable = {p.stem for p in memory_dir.glob("*.md")}
    fixture_working = {p.stem for p in (workspace / ".engram" / "working").glob("*.md")}

    go = tmp_path / "go"
    env = os.environ.copy()
    env.pop("ENGRAM_LOCK_TIMEOUT", None)  # the default timeout: the one users get
    argvs = [[str(workspace), str(1000 + i), str(PER_PROCESS), str(go)] for i in range(PROCESSES)]
    procs = start_writers(WRITER, argvs, env)
    started = time.monotonic()
    go.touch()
    cli_titles = save_sessions(workspace, tmp_path, random.Random(7), runs=CLI_RUNS, lines=CLI_LINES, env=env)
    results = finish(procs, timeout=80 * STRESS_SCALE)
    elapsed = time.monotonic() - started
    print(f"4 x {PER_PROCESS} commits + {CLI_RUNS} CLI runs in {elapsed:.1f} s")

    assert [b for r in results for b in r["busy"]] == [], "a writer starved into ENGRAM_BUSY"
    written = [memory_id for r in results for memory_id in r["written"]]
    assert [d for r in results for d in r["deferred"]] == []
    assert len(written) == PROCESSES * PER_PROCESS
    cli_ids = {p.stem for p in memory_dir.glob("*.md")} - fixture_durable - set(written)
    titles = {
        parse_memory((memory_dir / f"{i}.md").read_bytes(), file_id=i, scope="project", tier="durable").title
        for i in cli_ids
    }
    assert titles == set(cli_titles)
    assert len(set(written)) == len(written)

    # every memory exists and parses
    on_disk = {p.stem for p in memory_dir.glob("*.md")}
    assert on_disk == fixture_durable | set(written) | cli_ids
    for memory_id in written:
        memory = parse_memory(
            (memory_dir / f"{memory_id}.md").read_bytes(), file_id=memory_id, scope="project", tier="durable"
        )
        assert memory.active and memory.type == "fact"
    assert not list(memory_dir.glob(".*.tmp"))  # no temp files left behind
    assert not (workspace / ".engram" / "journal.json").exists()

    # every proposal was recorded and used exactly once
    pending = orjson.loads((workspace / ".engram" / "pending-approvals.json").read_bytes())["proposals"]
    assert len(pending) == min(PROCESSES * PER_PROCESS, MAX_PROPOSALS)  # the newest, within the cap
    assert {r["status"] for r in pending.values()} == {"used"}

    # the index lists exactly them (plus the fixture files)
    store = Store(workspace)
    store.view()
    index = _index_records(workspace / ".engram" / "index.json")
    expected = {f"durable/{i}" for i in fixture_durable | set(written) | cli_ids} | {
        f"working/{i}" for i in fixture_working
    }
    assert set(index.keys()) == expected
    assert not [k for k, v in index.items() if v.get("gone")]

    result = review.verify(store)
    assert result["mismatched"] == []
    assert result["missing"] == []
    assert result["unindexed"] == []
    assert result["ok"] is True
    assert result["pending"] == 0

    monkeypatch.chdir(workspace)
    capsys.readouterr()
    assert main(["verify"]) == 0, capsys.readouterr()
    assert elapsed < 60 * STRESS_SCALE


@pytest.mark.timeout(30)
def test_lock_held_elsewhere_gives_busy_and_writes_nothing(
    workspace: Path, engram_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store(workspace)
    entries, redactions = proposals.draft(
        store,
        [{"type": "fact", "title": "Quux widgets frobnicate nightly", "body": "Zorblax wobbegong glimmer."}],
    )
    preview = proposals.store_proposal(store, entries, redactions, "save")
    before = memory_state(workspace, engram_home)

    monkeypatch.setenv("ENGRAM_LOCK_TIMEOUT", "0.5")  # never wait out the real 5 s
    holder = hold_elsewhere(workspace / ".engram" / "engram.lock")
    try:
        started = time.monotonic()
        with pytest.raises(Busy) as info:
            commits.commit(store, preview.token, "all")
        assert time.monotonic() - started < 3
        assert info.value.code == "ENGRAM_BUSY"
        assert "nothing was changed" in info.value.message
        assert "retry" in info.value.message
        assert memory_state(workspace, engram_home) == before

        # the CLI says the same, with exit 1
        monkeypatch.chdir(workspace)
        assert main(["commit", preview.token]) == 1
        assert "ENGRAM_BUSY" in capsys.readouterr().err
        assert memory_state(workspace, engram_home) == before

        # readers never need the lock
        assert Store(workspace).search("uv python environments")
        assert Store(workspace).get("use-uv-for-python").title == "Use uv for Python environments"
    finally:
        let_go(holder)

    # retrying is safe: the same token now commits
    report = commits.commit(store, preview.token, "all")
    assert [w["id"] for w in report.written] == ["quux-widgets-frobnicate-nightly"]
