"""What `status` reports of a store, and the state files it notices: the read side's counts with
the write side's pending proposals, so it lives apart from the read facade (store.store)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from store.files.git import repository
from store.files.workspace import STATE_FILES, state_file_problem
from store.safety import untrusted
from store.write.approvals import Pending

if TYPE_CHECKING:
    from store.store import Store


def pending_count(store: Store) -> int:
    """Proposals still waiting for approval (not used, declined or expired)."""
    return Pending.read(store.project.pending_path, store.key).open_count(store.now())


def note_state_files(store: Store) -> None:
    """Notice every state file whose path holds something else (a folder, FIFO or link): reads
    treat it as absent, writes are refused until it is removed (`workspace.check_scope`)."""
    for scope in (store.project, store.user):
        for name in STATE_FILES:
            reason = state_file_problem(scope, name)
            if reason is not None:
                store.notice("ENGRAM_UNSAFE_PATH", reason + " (writes are refused until then)")


def report(store: Store) -> dict[str, Any]:
    """What status reports: the workspace (and whether git holds it), the user scope, the
    counts, the files that cannot be used by id, pending proposals, the vector signal."""
    note_state_files(store)
    view = store.view()
    config = store.config()
    durable = list(view.durable.values())
    return {
        "workspace": untrusted.line(store.workspace, 1000),  # a folder name a clone may choose
        "git": repository(store.workspace) is not None,
        "user_scope": untrusted.line(store.user.root, 1000),
        "user_scope_exists": store.user.root.is_dir(),
        "user_scope_problem": store.home_problem,
        "initialized": store.project.root.is_dir(),
        "counts": {
            "project": sum(1 for m in durable if m.scope == "project" and m.active),
            "user": sum(1 for m in durable if m.scope == "user" and m.active),
            "superseded": sum(1 for m in durable if m.status == "superseded"),
            "retired": sum(1 for m in durable if m.status == "retired"),
            "notes": len(view.notes),
            "invalid": len(view.problems),
        },
        "role": config.role,
        "rule_variant": config.rule_variant.get("mode", "base"),
        "pending_proposals": pending_count(store),
        "broken": [
            {
                "id": b.id,
                "scope": b.scope,
                "tier": b.tier,
                "file": b.problem.file,
                "code": b.problem.code,
                "verdict": b.verdict,
            }
            for b in view.broken
        ],
        "index": {  # the proof line's hash (status shows it only when there are memories)
            "hash": store.index_hash(view)[:12],
            "memories": sum(len(s.memories) for s in view.snapshots),
        },
        "read_only": store.read_only,
        **({"vectors": vectors} if (vectors := store.finder.vector_state())["state"] != "off" else {}),
    }
