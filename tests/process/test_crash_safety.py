"""Crash safety (SPEC §2 "Concurrency and durability", §4.2): SIGKILL at random instants.

A child process writes in a loop (commits, note saves, index refreshes, host-config edits) and
is killed with SIGKILL after a random delay, several times. After every kill: every file is
either old or new (all parse), a half-applied commit is rolled forward by `recover` (both files
of a two-candidate commit exist, or neither), derived files are rebuilt, verify does not crash.
Seeds are fixed, loops bounded. `make test` kills each writer a handful of times (more when
it has not got far enough yet); `ENGRAM_CRASH_ROUNDS=10 make test` kills ten times as often.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from engram_mcp.cli.main import main
from engram_mcp.hosts.edits import backup_path
from engram_mcp.hosts.formats import jsonc
from store.files.memory import parse_memory
from store.store import Store
from store.write import review, transaction
from tests.support.paths import REPO

SCALE = max(1, int(os.environ.get("ENGRAM_CRASH_ROUNDS") or 1))
"""Long mode: kill rounds per test are multiplied by this."""


# --- running and killing a child -----------------------------------------------------------------
def rounds(minimum: int, progressed: Callable[[], bool], cap: int = 40) -> Iterator[float]:
    """Stretch factors for the kill window, one per round: `minimum` rounds at 1.0, then on until
    `progressed()`, each extra round's window half as long again (at most 10x), `cap` rounds at
    most. A loaded machine runs the children slowly, so a fixed count of kills in a fixed window
    may land before any work is done."""
    minimum *= SCALE
    cap = max(cap, minimum)
    n = 0
    while n < minimum or (not progressed() and n < cap):
        yield min(10.0, 1.5 ** max(0, n - minimum + 1))
        n += 1


def kill_after_random_delay(
    script: str, args: list[str], rng: random.Random, low: float = 0.02, high: float = 0.4
) -> tuple[str, str]:
    """Start `script`, wait for its `ready` line, SIGKILL it after low..high s; (stdout, stderr)."""
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(
            [sys.executable, "-c", script, *args],
            cwd=REPO,
            env=os.environ.copy(),
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        assert proc.stdout is not None
        try:
            first = proc.stdout.readline()
            if first.strip() == "ready":
                time.sleep(rng.uniform(low, high))
            proc.send_signal(signal.SIGKILL)
            out = proc.stdout.read()  # what the wrapper buffered with "ready" too (not communicate())
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
            proc.stdout.close()
        errors.seek(0)
        err = errors.read().decode(errors="replace")
    assert first.strip() == "ready", (first, err)
    # it must have died from our kill, not from an error of its own
    assert proc.returncode == -signal.SIGKILL, f"child exited with {proc.returncode}:\n{err}"
    return out, err


def words(seed: str, n: int) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(9)) for _ in range(n))


WORDS_SOURCE = textwrap.dedent(
    """
    import random
    def words(seed, n):
        rng = random.Random(seed)
        return " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(9)) for _ in range(n))
    """
)


# --- checks shared by the tests ---------------------------------------------------------------
def assert_memory_files_parse(folder: Path, tier: str) -> dict[str, object]:
    """Every `<id>.md` (not dot-files: temp files) parses; {id: memory}."""
    out: dict[str, object] = {}
    for path in sorted(folder.glob("*.md")):
        if path.name.startswith("."):
            continue
        data = path.read_bytes()
        out[path.stem] = parse_memory(data, file_id=path.stem, scope="project", tier=tier)
    return out


def assert_derived_files_readable(root: Path) -> None:
    for name in ("index.json", "pending-approvals.json"):
        path = root / name
        if path.exists():
            orjson.loads(path.read_bytes())  # written atomically: never torn
    seals = root / "seals.log"
    if seals.exists():
        data = seals.read_bytes()
        lines = data.split(b"\n")
        complete, last = lines[:-1], lines[-1]  # `last` is b"" when the file ends with a newline
        for line in complete:
            key, sealed, tag = orjson.loads(line)  # only a torn LAST line is tolerated
            assert isinstance(key, str) and isinstance(sealed, str) and len(tag) == 64
        if last:
            print(f"seals.log has a torn last line ({len(last)} bytes)")
    journal = root / "journal.json"
    if journal.exists():
        assert isinstance(orjson.loads(journal.read_bytes())["writes"], list)  # written atomically


def temp_litter(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".*.tmp"))


# --- commits ------------------------------------------------------------------------------------
COMMITTER = WORDS_SOURCE + textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from store.write import commits
    from store.write import proposals
    from store.store import Store

    workspace, k = Path(sys.argv[1]), int(sys.argv[2])
    store = Store(workspace)
    store.warm()  # numpy and the search index loaded: the kills land in commits, not in imports
    print("ready", flush=True)
    while True:
        print(k, flush=True)
        raw = [
            {
                "type": "fact",
                "id": f"pair-{k}-{side}",
                "title": words(f"title-{k}-{side}", 4),
                "body": words(f"body-{k}-{side}", 14) + ".",
            }
            for side in ("a", "b")
        ]
        entries, redactions = proposals.draft(store, raw)
        assert [e.verdict.kind for e in entries] == ["ADD", "ADD"], entries
        preview = proposals.store_proposal(store, entries, redactions, "save")
        report = commits.commit(store, preview.token, "all")
        assert [w["id"] for w in report.written] == [f"pair-{k}-a", f"pair-{k}-b"], report
        k += 1
    """
)


@pytest.mark.timeout(60 * SCALE)
def test_commits_killed_at_random_are_all_or_nothing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(20261129)
    root = workspace / ".engram"
    memory_dir = root / "memory"
    fixture_ids = {p.stem for p in memory_dir.glob("*.md")}
    review.accept(Store(workspace))
    monkeypatch.chdir(workspace)

    next_k = 0
    started: set[int] = set()
    completed: set[int] = set()
    rolled_forward = 0
    litter = 0

    def applied() -> int:
        return sum(1 for k in started if (memory_dir / f"pair-{k}-a.md").exists())

    for stretch in rounds(6, lambda: applied() >= 5):
        out, _ = kill_after_random_delay(COMMITTER, [str(workspace), str(next_k)], rng, 0.05, 0.8 * stretch)
        ks = [int(line) for line in out.split()]  # ("ready" was read already)
        if ks:
            started.update(ks)
            completed.update(ks[:-1])  # a k is printed only after the previous commit returned
            next_k = ks[-1] + 1

        # straight after the kill, before any recovery: every file is old or new
        memories = assert_memory_files_parse(memory_dir, "durable")
        assert_derived_files_readable(root)
        had_journal = (root / "journal.json").exists()

        transaction.recover(Store(workspace))
        assert not (root / "journal.json").exists()
        memories = assert_memory_files_parse(memory_dir, "durable")
        rolled_forward += had_journal

        for k in started:
            a, b = f"pair-{k}-a" in memories, f"pair-{k}-b" in memories
            assert a == b, f"commit {k} is half-applied after recover: a={a} b={b}"
            if k in completed:
                assert a and b, f"commit {k} returned but its files are gone"
            if a:
                for side in ("a", "b"):
                    memory = memories[f"pair-{k}-{side}"]
                    assert memory.title == words(f"title-{k}-{side}", 4)  # type: ignore[attr-defined]
                    assert memory.body.strip() == words(f"body-{k}-{side}", 14) + "."  # type: ignore[attr-defined]
        expected = fixture_ids | {f"pair-{k}-{s}" for k in started for s in "ab"}
        assert set(memories) <= expected, f"unexpected files: {sorted(set(memories) - expected)}"
        litter = len(temp_litter(memory_dir)) + len(temp_litter(root))

        # after recovery verify blames nobody: the journal records the intent before any rename
        # and recovery seals what it wrote, so a kill at any instant leaves nothing unrecorded
        capsys.readouterr()
        assert main(["verify"]) == 0, capsys.readouterr()
        assert main(["verify", "--accept"]) == 0, capsys.readouterr()
        assert main(["verify"]) == 0, capsys.readouterr()
        capsys.readouterr()

    assert applied() >= 5, f"the children committed too little to test anything ({sorted(started)})"
    print(
        f"commits: {len(started)} started, {applied()} applied, {len(completed)} returned, {rolled_forward} journals rolled "
        f"forward, {litter} temp files left behind"
    )


# --- note saves ---------------------------------------------------------------------------------
NOTER = WORDS_SOURCE + textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from store.write import notes
    from store.store import Store

    workspace, k = Path(sys.argv[1]), int(sys.argv[2])
    store = Store(workspace)
    store.view()
    print("ready", flush=True)
    while True:
        text = words(f"note-{k}", 6) + "\\n" + words(f"note-body-{k}", 20)
        draft = notes.draft_note(store, text, objective="crash test")
        print("start", k, draft.id, flush=True)
        notes.save_note(store, draft)
        print("done", k, draft.id, flush=True)
        k += 1
    """
)


@pytest.mark.timeout(60 * SCALE)
def test_note_saves_killed_at_random_leave_whole_notes(workspace: Path) -> None:
    rng = random.Random(4242)
    working = workspace / ".engram" / "working"
    next_k = 0
    done: dict[int, str] = {}
    begun: dict[int, str] = {}
    litter: list[str] = []
    for stretch in rounds(5, lambda: len(done) >= 5):
        out, _ = kill_after_random_delay(NOTER, [str(workspace), str(next_k)], rng, high=0.4 * stretch)
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3:
                (done if parts[0] == "done" else begun)[int(parts[1])] = parts[2]
                next_k = max(next_k, int(parts[1]) + 1)

        notes_on_disk = assert_memory_files_parse(working, "working")
        assert_derived_files_readable(workspace / ".engram")
        for k, note_id in begun.items():
            text = words(f"note-{k}", 6) + "\n" + words(f"note-body-{k}", 20)
            if k in done:
                assert note_id in notes_on_disk, f"note {k} was saved but is gone"
            if note_id in notes_on_disk:
                assert notes_on_disk[note_id].body.strip() == text  # type: ignore[attr-defined]

        # temp files never count as memories
        litter = temp_litter(working)
        view = Store(workspace).view()
        assert not view.problems, view.problems
        assert {note_id for note_id in done.values()} <= set(view.notes)
        assert all(not i.startswith(".") and not i.endswith(".tmp") for i in view.notes)
        on_disk_ids = {p.stem for p in working.glob("*.md") if not p.name.startswith(".")}
        assert set(view.notes) <= on_disk_ids

    assert len(done) >= 5, f"the children saved too little to test anything ({done})"
    print(f"notes: {len(begun)} started, {len(done)} returned, temp files left behind: {litter}")


# --- index refreshes --------------------------------------------------------------------------------
REFRESHER = WORDS_SOURCE + textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from store.files.fsutil import write_atomic
    from store.files.memory import render_memory
    from store.store import Store

    workspace, i = Path(sys.argv[1]), int(sys.argv[2])
    root = workspace / ".engram"
    print("ready", flush=True)
    while True:
        slot = i % 3
        meta = {"id": f"hand-edit-{slot}", "type": "fact", "title": words(f"hand-title-{i}", 3),
                "scope": "project", "tags": [], "always": False, "status": "active", "supersedes": [],
                "created": "2026-11-29T22:00:00Z", "updated": "2026-11-29T22:00:00Z", "source": "save"}
        # an editor saving by rename: the memory file itself is never torn
        write_atomic(root / "memory" / f"hand-edit-{slot}.md", render_memory(meta, words(f"hand-body-{i}", 12) + "\\n"))
        if i % 4 == 0:
            (root / "search.idx").unlink(missing_ok=True)
        store = Store(workspace)
        hits = store.search("uv python environments")
        assert hits and hits[0].id == "use-uv-for-python", hits
        store.close()  # writes index.json and search.idx
        print(i, flush=True)
        i += 1
    """
)


def assert_store_reads_right(workspace: Path) -> None:
    """A fresh Store reads every file and finds the right hits, whatever the derived files hold."""
    store = Store(workspace)
    try:
        view = store.view()
        assert not view.problems, view.problems
        assert store.search("uv")[0].id == "use-uv-for-python"
        assert store.search("uv python environments")[0].id == "use-uv-for-python"
        for path in sorted((workspace / ".engram" / "memory").glob("hand-edit-*.md")):
            memory = parse_memory(path.read_bytes(), file_id=path.stem, scope="project", tier="durable")
            word = memory.body.split()[0]
            hits = store.search(word)
            assert hits and hits[0].id == path.stem, (word, [h.id for h in hits])  # not stale
            assert view.durable[path.stem].hash == memory.hash
    finally:
        store.close()


@pytest.mark.timeout(60 * SCALE)
def test_index_refreshes_killed_at_random_are_rebuilt(workspace: Path) -> None:
    rng = random.Random(777)
    root = workspace / ".engram"
    i = 0
    refreshed: list[int] = []
    for stretch in rounds(5, lambda: len(refreshed) >= 5):
        out, _ = kill_after_random_delay(REFRESHER, [str(workspace), str(i)], rng, high=0.4 * stretch)
        done = [int(line) for line in out.split()]
        refreshed.extend(done)
        i = (done[-1] + 1 if done else i) + 1  # the interrupted round's text is never reused
        assert_derived_files_readable(root)
        assert_memory_files_parse(root / "memory", "durable")
        assert_store_reads_right(workspace)
    assert len(refreshed) >= 5, "the children refreshed too little to test anything"
    print(f"index refreshes: {len(refreshed)}; temp files left behind: {temp_litter(root)}")


@pytest.mark.timeout(60 * SCALE)
@pytest.mark.parametrize(
    "damage",
    ["truncated", "garbage", "empty", "wrong-shape"],
)
def test_damaged_index_files_are_tolerated(
    workspace: Path, damage: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = workspace / ".engram"
    store = Store(workspace)
    review.accept(store)
    store.search("uv")
    store.close()
    index, search_idx = root / "index.json", root / "search.idx"
    assert index.exists() and search_idx.exists()
    rng = random.Random(damage)
    for path in (index, search_idx):
        data = path.read_bytes()
        if damage == "truncated":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "garbage":
            path.write_bytes(bytes(rng.randrange(256) for _ in range(len(data))))
        elif damage == "empty":
            path.write_bytes(b"")
        else:
            path.write_bytes(b'{"version": 2, "memories": [1, 2, 3]}' if path is index else data[:64] * 3)
    assert_store_reads_right(workspace)

    # verify does not crash on it either; once accepted it is clean again
    for path in (index, search_idx):  # damage them again: the read above rebuilt them
        path.write_bytes(b"\x00garbage{")
    store = Store(workspace)
    try:
        report = review.verify(store)
        assert report["mismatched"] == [] and report["missing"] == []
    finally:
        store.close()
    monkeypatch.chdir(workspace)
    capsys.readouterr()
    assert main(["verify", "--accept"]) == 0, capsys.readouterr()
    assert main(["verify"]) == 0, capsys.readouterr()


# --- host config edits ------------------------------------------------------------------------------
SETTINGS = """\
// Gemini CLI settings, edited by hand
{
  /* colours */
  "theme": "Default",
  "mcpServers": {
    // a server the user set up by hand
    "other": {"command": "other-mcp", "args": ["--port", "7"]}, // keep me
  },
}
"""
OTHER = {"command": "other-mcp", "args": ["--port", "7"]}

LINKER = textwrap.dedent(
    """
    import contextlib, io, sys
    from engram_mcp.cli.main import main

    workspace = sys.argv[1]
    print("ready", flush=True)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        while True:
            sink.seek(0); sink.truncate()
            assert main(["--workspace", workspace, "link", "gemini"]) == 0, sink.getvalue()
            assert main(["--workspace", workspace, "unlink", "gemini"]) == 0, sink.getvalue()
    """
)


@pytest.mark.timeout(60 * SCALE)
def test_link_edits_killed_at_random_keep_the_host_config_whole(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(99)
    folder = workspace / ".gemini"
    folder.mkdir()
    settings = folder / "settings.json"
    settings.write_text(SETTINGS)
    linked = unlinked = 0
    litter: list[str] = []
    for _ in range(5 * SCALE):
        kill_after_random_delay(LINKER, [str(workspace)], rng, 0.02, 0.3)
        text = settings.read_text("utf-8")
        data = jsonc.loads(text)
        assert data["theme"] == "Default"
        assert data["mcpServers"]["other"] == OTHER
        assert "// a server the user set up by hand" in text and "// keep me" in text
        assert "/* colours */" in text
        engram = data["mcpServers"].get("engram")
        if engram is None:
            unlinked += 1
        else:
            linked += 1
            assert "engram-mcp" in str(engram["command"])
        backup = backup_path(settings)  # under $ENGRAM_HOME, never beside the file (issue 22)
        if backup.exists():
            assert backup.read_text("utf-8") == SETTINGS, "the backup of the original is torn"
        litter = temp_litter(folder)
        others = sorted(p.name for p in folder.iterdir() if p.name not in ("settings.json", "commands"))
        assert others == litter, f"unexpected files in .gemini/: {others}"
        assert all(name.startswith(".settings.json.") for name in litter)
        commands = folder / "commands"  # the /engram command link installs beside the entry
        for path in commands.iterdir() if commands.is_dir() else []:
            if path.name == "engram.toml":
                assert "{{args}}" in tomllib.loads(path.read_text("utf-8"))["prompt"], "a torn command"
            else:
                assert path.name.startswith(".engram.toml."), (
                    f"unexpected file in .gemini/commands/: {path.name}"
                )

    # the config still works: link, then unlink gives back the user's bytes
    monkeypatch.chdir(workspace)
    capsys.readouterr()
    assert main(["link", "gemini"]) == 0, capsys.readouterr()
    assert jsonc.loads(settings.read_text("utf-8"))["mcpServers"]["other"] == OTHER
    assert main(["unlink", "gemini"]) == 0, capsys.readouterr()
    assert settings.read_text("utf-8") == SETTINGS
    print(
        f"link edits: {linked} kills left engram linked, {unlinked} unlinked; "
        f"temp files left behind: {litter}"
    )


# --- a kill between a memory write and its seal (SPEC §2, issue 9) ---------------------------------
KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from store.read import catalog
    from store.write import commits
    from store.write import notes
    from store.write import proposals
    from store.write import transaction
    from store.store import Store

    workspace, operation, point = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    store = Store(workspace)
    if operation == "note":
        draft = notes.draft_note(store, "the nightly job runs at two\\nwhen the queue is empty")
    else:
        raw = [
            {"type": "fact", "title": "Frobnicate the quux widgets nightly", "body": "Run frob at 2am."},
            {"type": "fact", "title": "Glimmer dashboards refresh hourly", "body": "Hourly glimmer refresh."},
        ]
        if operation == "update":
            raw = [{"type": "rule", "id": "use-uv-for-python", "title": "Use uv for Python environments",
                    "body": "Create and sync environments with uv, and pin the uv version in CI."}]
        entries, redactions = proposals.draft(store, raw)
        preview = proposals.store_proposal(store, entries, redactions, "save")

    def die(*_, **__):
        os.kill(os.getpid(), signal.SIGKILL)

    if point == "seal":  # every file renamed into place, nothing sealed yet
        catalog.Catalog.seal = die
    else:  # the n-th atomic write of the operation (the journal's own is the first)
        real, calls = transaction.write_atomic, [0]
        def counting(*args, **kwargs):
            calls[0] += 1
            if calls[0] > int(point):
                die()
            return real(*args, **kwargs)
        transaction.write_atomic = counting
    print("ready", flush=True)
    if operation == "note":
        notes.save_note(store, draft)
    else:
        commits.commit(store, preview.token, "all")
    print("survived", flush=True)
    """
)


@pytest.mark.timeout(60 * SCALE)
@pytest.mark.parametrize(
    ("operation", "point"),
    [
        ("note", "seal"),
        ("commit", "seal"),
        ("update", "seal"),
        ("commit", "2"),
        ("commit", "3"),
        ("note", "1"),
    ],
)
def test_a_kill_between_writing_a_memory_and_sealing_it_leaves_verify_clean(
    workspace: Path, operation: str, point: str
) -> None:
    """SIGKILL at a chosen instant of a write; after recovery verify blames nobody."""
    review.accept(Store(workspace))
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(workspace), operation, point],
        cwd=REPO,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert proc.stdout.split() == ["ready"], proc.stdout
    store = Store(workspace)
    transaction.recover(store)
    report = review.verify(store)
    assert (report["mismatched"], report["missing"], report["unindexed"]) == ([], [], []), report
    assert not (workspace / ".engram" / "journal.json").exists()
    memory = workspace / ".engram" / "memory"
    if operation == "commit":  # rolled forward: both files, sealed
        assert (memory / "frobnicate-the-quux-widgets-nightly.md").exists()
        assert (memory / "glimmer-dashboards-refresh-hourly.md").exists()
    if operation == "update":
        assert "pin the uv version" in (memory / "use-uv-for-python.md").read_text()
