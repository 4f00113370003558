"""What a human reviews: memory files against the hashes engram recorded (`verify`), and
recording the current files as reviewed (`accept`, `engram verify --accept`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from store import status as store_status
from store.errors import Busy, Problem, ReadOnly, UnsafePath
from store.files.memory import Memory
from store.read.catalog import Catalog
from store.read.index_file import SHELL_MARK
from store.read.snapshot import Snapshot, memory_key
from store.write import transaction

if TYPE_CHECKING:
    from store.store import Store


def display_id(memory: Memory) -> str:
    """How a memory is named in reports: its id; user-scope and notes carry a prefix."""
    if memory.tier == "working":
        return f"note:{memory.id}"
    return memory.id if memory.scope == "project" else f"user:{memory.id}"


def verify(store: Store) -> dict[str, Any]:
    """Files against what engram recorded: hand edits, vanished and unrecorded files, and CLI
        writes made from an agent's shell (`agent_shell`: sealed with store.read.index_file.SHELL_MARK,
        listed until the human accepts them; a file changed after such a write is a hand edit).
    A file that is there but does not parse is `unparsed` (by id; its problem is among `problems`),
    never `missing`: `accept` keeps its last record, so the repaired file compares with it.

        Lock-free first, as reads are. A commit of another process in flight can make a clean
        store look otherwise for an instant (its file renamed in, its seal not yet appended, or
        the other way round between this look at the files and the read of the seals), so a
        result that is not clean is confirmed under the workspace lock, every folder listed and
        every file stat'ed again, and that result is the one reported (engram's own write must never be
        reported as the user's). When the lock is busy or the store is read-only, the lock-free
        result stands."""
    store_status.note_state_files(store)
    view = store.view()
    report = _compare(store, store.catalogs, view.snapshots)
    if report["ok"] or store.read_only:
        return report
    try:
        with transaction.scope_locks(store):
            if store.project.journal_path.exists():
                transaction.recover_locked(store)
            for catalog in store.catalogs:
                catalog.relist()
            return _compare(store, store.catalogs, store.view(sweep=True).snapshots)
    except (
        Busy,
        ReadOnly,
        UnsafePath,
    ):  # busy, a read-only mount, a lock that is no file: the lock-free result stands
        return report


def accept(store: Store) -> None:
    """Record the current files as reviewed (`engram verify --accept`).

    Under the workspace lock (and the user scope's, in the writers' order), an interrupted
    commit rolled forward first, and from every folder listed and every file stat'ed again
    after the lock is taken: a commit racing it lands wholly before (and is accepted with
    the rest) or wholly after (and seals itself), never in between (a commit was
    then reported as "added by hand").

    Run from an agent's shell (`store.agent_shell`, SPEC §7), what it accepts is recorded as
    accepted there: verify keeps listing it until the human accepts."""
    with transaction.scope_locks(store):
        if store.project.journal_path.exists():
            transaction.recover_locked(store)
        for catalog in store.catalogs:
            catalog.relist()
            catalog.refresh(force=True)
            catalog.seal(agent_shell=store.agent_shell)


def _compare(store: Store, catalogs: Sequence[Catalog], snapshots: Sequence[Snapshot]) -> dict[str, Any]:
    mismatched: list[str] = []
    missing: list[str] = []
    unindexed: list[str] = []
    shell: list[str] = []
    unparsed: list[str] = []
    repaired: list[Problem] = []
    damaged_index: list[Problem] = []
    checked = 0
    for catalog, snapshot in zip(catalogs, snapshots, strict=True):
        stored, problem = catalog.read_index()
        damaged = problem is not None and problem.code == "ENGRAM_UNSAFE_PATH"
        if damaged:  # no record of engram's own writes can be read: the index is the problem
            assert problem is not None
            damaged_index.append(problem)
        elif problem is not None:
            repaired.append(problem)
        present = {memory_key(m): m for m in snapshot.memories}
        broken = {b.key: b for b in snapshot.broken if b.key not in present}
        prefix = "" if catalog.scope.scope == "project" else "user:"
        unparsed += [prefix + ("note:" if b.tier == "working" else "") + b.id for b in broken.values()]
        checked += len(present)
        for key, memory in present.items():
            sealed = stored.get(key, {}).get("sealed") if isinstance(stored.get(key), dict) else None
            if sealed is None:
                if not damaged:  # never blamed on the user while the index cannot be read
                    unindexed.append(display_id(memory))
            elif sealed == SHELL_MARK + memory.hash:  # written there, unchanged since
                shell.append(display_id(memory))
            elif sealed != memory.hash:
                mismatched.append(display_id(memory))
        for key, record in stored.items():
            if key in broken:  # there, and unreadable: its record stands until the file parses
                continue
            if key not in present and isinstance(record, dict) and record.get("sealed"):
                shown = prefix + ("note:" if key.startswith("working/") else "") + key.split("/", 1)[1]
                if record["sealed"] == SHELL_MARK:  # removed from an agent's shell
                    shell.append(f"{shown} (removed)")
                else:
                    missing.append(shown)
    problems = [p for s in snapshots for p in s.problems] + damaged_index
    return {
        "ok": not mismatched and not missing and not unindexed and not shell and not problems,
        "checked": checked,
        "mismatched": sorted(mismatched),
        "missing": sorted(missing),
        "unindexed": sorted(unindexed),
        "agent_shell": sorted(shell),
        "unparsed": sorted(unparsed),
        "pending": store_status.pending_count(store),
        "problems": problems,
        "repaired": list(
            dict.fromkeys(
                [f"{p.file}: {p.message}" for p in repaired]
                + [message for code, message in store.notices() if code == "ENGRAM_UNTRUSTED"]
            )
        )
        + (
            [f"completed an interrupted commit from its journal ({store.recovered} files)"]
            if store.recovered
            else []
        ),
    }
