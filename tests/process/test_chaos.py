"""Chaos acceptance test (issue 9; SPEC §2 "Concurrency and durability", §4.2).

Four real `engram-mcp` servers and the `engram` CLI write one workspace at once (proposals and
commits, working notes, rule-variant settings) while a killer thread SIGKILLs one of them at
random instants; a killed server is restarted and its client carries on. Each actor runs a
fixed number of operations. After recovery:

* every memory and note file parses, and the derived files are readable;
* every commit, note and setting acknowledged to its client is on disk, exactly once; nothing
  is duplicated (every operation uses a title of its own). A commit whose server was killed
  before it answered is retried with the same token on the restarted server, as a client
  would: it is written then, or refused as already used, never written twice;
* `engram verify` is clean: no engram write is reported as a hand edit, a missing or an
  unrecorded file, whatever instant the kills hit.

One run is part of `make test` (about 10 s). `ENGRAM_CHAOS_RUNS=10` runs 10 in a row, each in
a fresh workspace with the next seed; `ENGRAM_CHAOS_SEED=N` replays the schedule of seed N.
The seed of every run is printed, and named in any failure. (Thread and process scheduling
still vary between replays: the seed fixes which actor is killed when, and every title.)
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from store.files.memory import parse_memory
from store.store import Store
from store.write import review, transaction
from tests.support import terminal
from tests.support.paths import ENGRAM, FIXTURES
from tests.support.wire import ProcessSession as WireSession
from tests.support.writers import words

RUNS = int(os.environ.get("ENGRAM_CHAOS_RUNS") or 1)
SEED = int(os.environ.get("ENGRAM_CHAOS_SEED") or 20261201)
SERVERS = 4
SERVER_OPS = 10
CLI_OPS = 4
KILLS = 8
REPLY_TIMEOUT = 30.0


@dataclass
class Acknowledged:
    """What clients were told was written: memories and notes by title, setting ids."""

    memories: dict[str, str] = field(default_factory=dict)
    """title -> id"""
    notes: dict[str, str] = field(default_factory=dict)
    settings: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Actor:
    """One writer whose current process the killer may SIGKILL at any instant."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.proc: subprocess.Popen[bytes] | subprocess.Popen[str] | None = None
        self.kills = 0
        self.restarts = 0
        self.lost = 0
        """Operations cut short by a kill (never acknowledged)."""
        self.retried = 0
        """Commits retried with the same token after a kill (acknowledged then)."""
        self.guard = threading.Lock()
        self.committing = threading.Event()
        """Set while an engram_commit request is in flight: the killer aims some kills there."""
        self.ready = threading.Event()
        """Set while a started server serves (a kill during start-up tests little)."""

    def kill(self) -> bool:
        with self.guard:
            proc = self.proc
            if proc is None or proc.poll() is not None:
                return False
            if self.name != "cli" and not self.ready.is_set():
                return False  # restarting: a kill during start-up tests little
            if self.name == "cli" and self.kills >= CLI_OPS // 2:
                return False  # half of the CLI's writes run to the end
            proc.send_signal(signal.SIGKILL)
            self.kills += 1
            return True


class Died(Exception):
    """The server went away (killed) before it answered."""


def discard(session: WireSession) -> None:
    """Reap a killed (or finished) server and close its pipes."""
    if session.proc.poll() is None:
        session.proc.kill()
    session.proc.wait(timeout=10)
    assert session.proc.stdin is not None
    with contextlib.suppress(OSError):
        session.proc.stdin.close()
    session._release()


def call(session: WireSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's structured envelope; Died when the server was killed before it answered."""
    try:
        reply = session.request("tools/call", {"name": name, "arguments": arguments}, timeout=REPLY_TIMEOUT)
    except (EOFError, BrokenPipeError, OSError) as exc:
        raise Died(name) from exc
    except queue.Empty:
        raise AssertionError(f"{name}: no reply in {REPLY_TIMEOUT:g} s from a live server") from None
    assert "error" not in reply, reply
    return reply["result"]["structuredContent"]  # type: ignore[no-any-return]


def ok(envelope: dict[str, Any]) -> dict[str, Any]:
    assert envelope["ok"] is True, envelope
    return envelope["data"]  # type: ignore[no-any-return]


def server_actor(actor: Actor, workspace: Path, env: dict[str, str], seed: int, acked: Acknowledged) -> None:
    rng = random.Random(seed)

    def start() -> WireSession:
        while True:
            session = WireSession(workspace, env=env)
            with actor.guard:
                actor.proc = session.proc
            try:
                session.initialize()
                actor.ready.set()
                return session
            except (EOFError, BrokenPipeError, OSError, queue.Empty):
                discard(session)  # killed while starting: start again
                actor.restarts += 1

    def commit(token: str) -> dict[str, Any]:
        actor.committing.set()
        try:
            return ok(call(session, "engram_commit", {"approval_token": token, "approve": "all"}))
        finally:
            actor.committing.clear()

    def restart() -> None:
        nonlocal session
        actor.lost += 1
        actor.ready.clear()
        discard(session)
        actor.restarts += 1
        session = start()

    session = start()
    try:
        for n in range(SERVER_OPS):
            kind = rng.choices(["memory", "note", "setting"], weights=[6, 2, 2])[0]
            token = ""
            try:
                if kind == "memory":
                    title = f"{actor.name} {n} {words(rng, 3)}"
                    body = words(rng, 12) + "."
                    candidate = {"type": "fact", "title": title, "body": body}
                    preview = ok(call(session, "engram_save", {"candidates": [candidate]}))
                    assert preview["candidates"][0]["verdict"].startswith("ADD"), preview
                    token = preview["approval_token"]
                    report = commit(token)
                    assert report["deferred"] == [], report
                    with acked.lock:
                        acked.memories[title] = report["written"][0]["id"]
                elif kind == "note":
                    text = f"Scratch {actor.name} {n}: {words(rng, 6)}."
                    token = ok(call(session, "engram_note", {"text": text, "objective": "chaos"}))[
                        "approval_token"
                    ]
                    report = commit(token)
                    with acked.lock:
                        acked.notes[text] = report["written"][0]["id"]
                else:
                    memory_id = f"{actor.name}-setting-{n}"
                    arguments = {"mode": "fixed", "variant": "terse", "id": memory_id}
                    ok(call(session, "engram_set_rule_variant", arguments))
                    with acked.lock:
                        acked.settings.add(memory_id)
            except Died:
                restart()
                if token:  # the commit's fate is unknown: retry it once, as a client would
                    try:
                        retried = call(session, "engram_commit", {"approval_token": token, "approve": "all"})
                    except Died:
                        restart()
                        continue
                    codes = [d["code"] for d in retried["diagnostics"]]
                    assert retried["ok"] or codes == ["ENGRAM_TOKEN_USED"], retried
                    actor.retried += 1
                    with acked.lock:  # written now, or by the killed attempt: once either way
                        if kind == "memory":
                            acked.memories[title] = ""
                        else:
                            acked.notes[text] = ""
    finally:
        with actor.guard:
            actor.proc = None
        actor.ready.clear()
        if session.proc.poll() is None:
            assert session.close() == 0, session.stderr
        else:
            discard(session)


def cli_actor(actor: Actor, workspace: Path, env: dict[str, str], seed: int, acked: Acknowledged) -> None:
    """`engram save-session --force` (one knowledge line) and `engram note`, alternately."""
    rng = random.Random(seed)
    for n in range(CLI_OPS):
        if n % 2 == 0:
            line = f"Remember that cli {n} {words(rng, 5)}"
            text = workspace.parent / f"{actor.name}-{n}.txt"
            text.write_text(f"Some chat first.\n- {line}.\n")
            argv = [ENGRAM, "save-session", "--text", str(text), "--force"]
        else:
            note = f"Cli scratch {n}: {words(rng, 6)}."
            argv = [ENGRAM, "note", note, "--objective", "chaos"]
        with actor.guard:
            proc = actor.proc = terminal.popen(  # the human's own command: in a terminal (SPEC §7)
                argv, cwd=workspace, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        out, err = proc.communicate(timeout=REPLY_TIMEOUT)
        with actor.guard:
            actor.proc = None
        if proc.returncode == -signal.SIGKILL:
            actor.lost += 1
            continue  # killed: not acknowledged
        assert proc.returncode == 0, err
        with acked.lock:
            if n % 2 == 0:
                assert out.startswith("Saved 1 memory: ") and "not saved" not in out.lower(), out
                acked.memories[line.removeprefix("Remember that ").capitalize()] = ""
            else:
                acked.notes[note] = ""


def killer(actors: list[Actor], rng: random.Random, stop: threading.Event) -> None:
    kills = 0
    while kills < KILLS and not stop.wait(rng.uniform(0.1, 0.6)):
        kills += actors[rng.randrange(len(actors))].kill()


def run_once(root: Path, seed: int) -> str:
    """One chaos run in a fresh workspace; returns a one-line summary."""
    workspace, home = root / "ws", root / "home"
    shutil.copytree(FIXTURES / "workspace", workspace)
    shutil.copytree(FIXTURES / "home", home)
    env = {**os.environ, "ENGRAM_HOME": str(home), "HOME": str(root)}
    env.pop("ENGRAM_LOCK_TIMEOUT", None)  # the default timeout users get
    review.accept(Store(workspace, env=env))
    engram = workspace / ".engram"
    fixture_durable = {p.stem for p in (engram / "memory").glob("*.md")}

    rng = random.Random(seed)
    acked = Acknowledged()
    actors = [Actor(f"server{n}") for n in range(SERVERS)] + [Actor("cli")]
    errors: list[BaseException] = []

    def guarded(target: Any, *args: Any) -> None:
        try:
            target(*args)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [
        threading.Thread(
            target=guarded, args=(server_actor, actor, workspace, env, rng.randrange(1 << 30), acked)
        )
        for actor in actors[:SERVERS]
    ]
    threads.append(
        threading.Thread(
            target=guarded, args=(cli_actor, actors[-1], workspace, env, rng.randrange(1 << 30), acked)
        )
    )
    stop = threading.Event()
    kill_thread = threading.Thread(target=killer, args=(actors, random.Random(rng.randrange(1 << 30)), stop))
    started = time.monotonic()
    for thread in [*threads, kill_thread]:
        thread.start()
    for thread in threads:
        thread.join(120)
    stop.set()
    for actor in actors:
        actor.committing.set()  # wake a killer waiting for a commit
        actor.ready.set()
    kill_thread.join(10)
    elapsed = time.monotonic() - started
    if errors:
        raise errors[0]
    kills = sum(a.kills for a in actors)

    # recovery: what a fresh start does (rolls an interrupted commit forward)
    transaction.recover(Store(workspace, env=env))

    # every file parses; derived files are whole
    memories = {
        p.stem: parse_memory(p.read_bytes(), file_id=p.stem, scope="project", tier="durable")
        for p in (engram / "memory").glob("*.md")
    }
    notes = {
        p.stem: parse_memory(p.read_bytes(), file_id=p.stem, scope="project", tier="working")
        for p in (engram / "working").glob("*.md")
    }
    for name in ("pending-approvals.json", "index.json", "config.json"):
        if (engram / name).exists():
            orjson.loads((engram / name).read_bytes())
    assert not (engram / "journal.json").exists()

    # nothing acknowledged is lost, nothing is duplicated
    titles = Counter(m.title for m in memories.values())
    assert [t for t, n in titles.items() if n > 1] == [], "duplicated memories"
    for title, memory_id in acked.memories.items():
        assert titles[title] == 1, f"acknowledged memory {title!r} is lost"
        if memory_id:
            assert memories[memory_id].title == title
    note_bodies = Counter(n.body.strip() for n in notes.values())
    for text in acked.notes:
        assert note_bodies[text] == 1, f"acknowledged note {text!r} found {note_bodies[text]} times"
    config = orjson.loads((engram / "config.json").read_bytes())
    ids = config.get("rule_variant", {}).get("ids", {})
    assert acked.settings <= set(ids), f"acknowledged settings lost: {sorted(acked.settings - set(ids))}"
    assert set(memories) >= fixture_durable

    # verify is clean: engram's own writes are never blamed on the user
    report = review.verify(Store(workspace, env=env))
    assert (report["mismatched"], report["missing"], report["unindexed"]) == ([], [], []), report
    assert report["problems"] == [], report["problems"]
    proc = subprocess.run(
        [ENGRAM, "verify"], cwd=workspace, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hits = ", ".join(f"{a.name} {a.kills}/{a.lost}" for a in actors)
    retried = sum(a.retried for a in actors)
    return (
        f"seed {seed}: {elapsed:.1f} s, {kills} kills (kills/operations cut: {hits}; {retried} commits retried), {len(acked.memories)} memories, "
        f"{len(acked.notes)} notes, {len(acked.settings)} settings acknowledged; verify clean"
    )


@pytest.mark.timeout(90 * RUNS)
def test_servers_and_the_cli_killed_at_random_lose_nothing_and_verify_clean(tmp_path: Path) -> None:
    for run in range(RUNS):
        seed = SEED + run
        print(f"chaos run {run + 1}/{RUNS}, seed {seed} (replay: ENGRAM_CHAOS_SEED={seed})", flush=True)
        try:
            print(run_once(tmp_path / f"run-{run}", seed), flush=True)
        except BaseException as exc:
            raise AssertionError(f"chaos run {run + 1}/{RUNS} failed with seed {seed}: {exc}") from exc
