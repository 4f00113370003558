"""Concurrency stress (SPEC §2 "Concurrency and durability", §4.2): servers and the CLI at once.

Four `engram-mcp` processes (legacy stdio sessions) and the `engram` command line write and read
one workspace at the same time for a fixed number of operations (10 commits each;
`ENGRAM_STRESS_SCALE=10` for the long mode). They are real processes: in one process the four
servers would share one interpreter lock and take turns. Afterwards nothing is lost, duplicated
or torn, the index lists exactly the files, verify is clean. And a lock held by another process
past the timeout gives ENGRAM_BUSY, writes nothing, and a retry succeeds (that server runs
in-process).
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest

from engram_mcp.cli.main import main
from store.files.memory import parse_memory
from store.store import Store
from store.write import review
from tests.support.snapshots import memory_state
from tests.support.store_helpers import hold_elsewhere, let_go
from tests.support.store_helpers import index_records as _index_records
from tests.support.wire import ProcessSession, WireSession, result_of, tool_data
from tests.support.writers import STRESS_SCALE, save_sessions, words

SERVERS = 4
PER_SERVER = 10 * STRESS_SCALE
CLI_RUNS = 5
CLI_LINES = 2  # 10 memories from the command line
LOCK_TIMEOUT = 0.3
"""Seconds, injected as ENGRAM_LOCK_TIMEOUT: the busy path is the same as at the real 5 s."""


def drive_server(session: ProcessSession, seed: int) -> dict[str, Any]:
    """PER_SERVER save+commit of unique candidates, each followed by a search or a load."""
    rng = random.Random(seed)
    written: list[str] = []
    titles: list[str] = []
    deferred: list[Any] = []
    reads = 0
    for i in range(PER_SERVER):
        title = words(rng, 4)
        body = words(rng, 14) + "."
        preview = tool_data(
            session.call("engram_save", {"candidates": [{"type": "fact", "title": title, "body": body}]})
        )
        assert [c["verdict"] for c in preview["candidates"]][0].startswith("ADD"), preview
        report = tool_data(
            session.call("engram_commit", {"approval_token": preview["approval_token"], "approve": "all"})
        )
        written += [w["id"] for w in report["written"]]
        deferred += report["deferred"]
        titles.append(title)
        # a read of something this server wrote earlier: readers never wait for the writers
        earlier = titles[rng.randrange(len(titles))]
        if i % 2 == 0:
            hits = tool_data(session.call("engram_search", {"query": earlier}))["entries"]
            assert hits and hits[0]["title"] == earlier, (earlier, hits[:2])
        else:
            tool_data(session.call("engram_load", {"query": earlier}))
        reads += 1
    return {"written": written, "titles": titles, "deferred": deferred, "reads": reads}


@pytest.mark.timeout(90 * STRESS_SCALE)
def test_four_servers_and_the_cli_share_one_workspace(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = workspace / ".engram"
    memory_dir = root / "memory"
    review.accept(Store(workspace))
    fixture_durable = {p.stem for p in memory_dir.glob("*.md")}
    fixture_working = {p.stem for p in (root / "working").glob("*.md")}

    sessions = [ProcessSession(workspace) for _ in range(SERVERS)]
    try:
        for session in sessions:
            session.initialize()
        started = time.monotonic()
        with ThreadPoolExecutor(SERVERS + 1) as pool:
            servers = [pool.submit(drive_server, s, 5000 + n) for n, s in enumerate(sessions)]
            cli = pool.submit(
                save_sessions,
                workspace,
                tmp_path,
                random.Random(99),
                runs=CLI_RUNS,
                lines=CLI_LINES,
                env=os.environ.copy(),
            )
            results = [f.result(timeout=80 * STRESS_SCALE) for f in servers]
            cli_titles = cli.result(timeout=80 * STRESS_SCALE)
        elapsed = time.monotonic() - started
    finally:
        for session in sessions:
            with session:
                pass
    print(f"{SERVERS} servers x {PER_SERVER} commits + {CLI_RUNS} CLI runs in {elapsed:.1f} s")
    for session in sessions:
        assert session.proc.returncode == 0, session.stderr

    written = [i for r in results for i in r["written"]]
    assert [d for r in results for d in r["deferred"]] == []
    assert len(written) == SERVERS * PER_SERVER
    assert sum(r["reads"] for r in results) == SERVERS * PER_SERVER

    # zero torn: every file parses
    memories = {
        p.stem: parse_memory(p.read_bytes(), file_id=p.stem, scope="project", tier="durable")
        for p in memory_dir.glob("*.md")
    }
    for p in (root / "working").glob("*.md"):
        parse_memory(p.read_bytes(), file_id=p.stem, scope="project", tier="working")
    for name in ("pending-approvals.json", "index.json"):
        orjson.loads((root / name).read_bytes())
    assert not (root / "journal.json").exists()
    assert not list(memory_dir.glob(".*.tmp"))

    # zero lost: every committed id exists with its title; every CLI line became a memory
    for r in results:
        for memory_id, title in zip(r["written"], r["titles"], strict=True):
            assert memory_id in memories, f"committed {memory_id} is gone"
            assert memories[memory_id].title == title
    by_title = Counter(m.title for m in memories.values())
    for title in cli_titles:
        assert by_title[title] == 1, f"CLI memory {title!r} found {by_title[title]} times"

    # zero duplicated: no two files with one title, no file beyond what was written
    assert [t for t, n in by_title.items() if n > 1] == []
    assert len(memories) == len(fixture_durable) + SERVERS * PER_SERVER + CLI_RUNS * CLI_LINES
    assert set(written) | fixture_durable <= set(memories)

    # every proposal was used exactly once
    proposals = orjson.loads((root / "pending-approvals.json").read_bytes())["proposals"]
    assert {r["status"] for r in proposals.values()} == {"used"}

    # the index lists exactly the files after a fresh refresh + close
    store = Store(workspace)
    store.view()
    store.close()
    index = _index_records(root / "index.json")
    expected = {f"durable/{i}" for i in memories} | {f"working/{i}" for i in fixture_working}
    assert set(index.keys()) == expected
    assert not [k for k, v in index.items() if v.get("gone")]

    # verify: every write was recorded by engram itself, so it is clean even before an accept
    store = Store(workspace)
    report = review.verify(store)
    store.close()
    assert report["unindexed"] == [] and report["mismatched"] == [] and report["missing"] == []
    assert report["pending"] == 0
    monkeypatch.chdir(workspace)
    capsys.readouterr()
    assert main(["verify", "--accept"]) == 0, capsys.readouterr()
    assert main(["verify"]) == 0, capsys.readouterr()
    assert elapsed < 75 * STRESS_SCALE


@pytest.mark.timeout(60)
def test_commit_while_another_process_holds_the_lock_is_busy_then_retry_succeeds(
    workspace: Path, engram_home: Path
) -> None:
    root = workspace / ".engram"
    # a short timeout injected into the server, so the test does not wait out the real 5 s
    with WireSession(workspace, env={"ENGRAM_LOCK_TIMEOUT": str(LOCK_TIMEOUT)}) as session:
        session.initialize()
        title = "Quux widgets frobnicate nightly"
        preview = tool_data(
            session.call(
                "engram_save",
                {"candidates": [{"type": "fact", "title": title, "body": "Zorblax wobbegong glimmer."}]},
            )
        )
        token = preview["approval_token"]
        before = memory_state(workspace, engram_home)

        holder = hold_elsewhere(root / "engram.lock")
        try:
            started = time.monotonic()
            reply = session.request(
                "tools/call",
                {"name": "engram_commit", "arguments": {"approval_token": token, "approve": "all"}},
                timeout=20,
            )
            waited = time.monotonic() - started
            result = result_of(reply)
            assert result.get("isError") is True, result
            diagnostics = result["structuredContent"]["diagnostics"]
            assert [d["code"] for d in diagnostics] == ["ENGRAM_BUSY"], diagnostics
            message = diagnostics[0]["message"]
            assert "nothing was changed" in message and "retrying is safe" in message, message
            assert "nothing was changed" in result["content"][0]["text"]
            assert LOCK_TIMEOUT * 0.9 <= waited < LOCK_TIMEOUT + 2, (
                f"commit gave up after {waited:.1f} s, not at the {LOCK_TIMEOUT} s timeout"
            )
            assert holder.poll() is None, "the holder let go before the commit gave up"

            # nothing was written: memories, notes and the proposal are as before
            assert memory_state(workspace, engram_home) == before
            assert not (root / "journal.json").exists()
            assert not (root / "memory" / "quux-widgets-frobnicate-nightly.md").exists()

            # readers never need the lock
            hits = tool_data(session.call("engram_search", {"query": "uv python environments"}))["entries"]
            assert hits[0]["id"] == "use-uv-for-python"
        finally:
            released = let_go(holder)
        assert released == 0

        # retrying the same token after the release succeeds
        report = tool_data(session.call("engram_commit", {"approval_token": token, "approve": "all"}))
        assert [w["id"] for w in report["written"]] == ["quux-widgets-frobnicate-nightly"]
        assert report["deferred"] == []
        memory = parse_memory(
            (root / "memory" / "quux-widgets-frobnicate-nightly.md").read_bytes(),
            file_id="quux-widgets-frobnicate-nightly",
            scope="project",
            tier="durable",
        )
        assert memory.title == title
