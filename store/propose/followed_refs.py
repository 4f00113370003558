"""The ref updates git's renames call for, as candidates for the human to approve.

A memory citing `redis.go#KeyPrefix` after `git mv redis.go counters.go` is proposed as an
UPDATE of itself whose ref (and routing path, when it names the same file) is the new path,
everything else kept; nothing is written until the human commits the proposal.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from store.code.refs import memory_refs, parse_ref
from store.code.staleness import Checker
from store.files.memory import Memory


def followed(memory: Memory, checker: Checker) -> dict[str, str]:
    """Old path → new path for each of the memory's refs whose file git saw renamed."""
    moves: dict[str, str] = {}
    for ref in memory_refs(memory.refs):
        if ref.path and ref.path not in moves:
            new = checker.moved(ref)
            if new is not None:
                moves[ref.path] = new
    return moves


def candidates(memories: Iterable[Memory], checker: Checker) -> list[dict[str, Any]]:
    """One UPDATE candidate per active project memory with a renamed ref."""
    out = []
    for memory in memories:
        if memory.scope != "project" or memory.tier != "durable" or memory.status != "active":
            continue
        moves = followed(memory, checker)
        if not moves:
            continue
        refs = []
        for text in memory.refs:
            ref = parse_ref(text)
            if ref is None or ref.path not in moves:
                refs.append(text)
            else:
                refs.append(moves[ref.path] + (f"#{ref.symbol}" if ref.symbol else ""))
        out.append(
            {
                "type": memory.type,
                "id": memory.id,
                "scope": memory.scope,
                "title": memory.title,
                "body": memory.body,
                "tags": list(memory.tags),
                "paths": [moves.get(p, p) for p in memory.paths],
                "refs": list(dict.fromkeys(refs)),
            }
        )
    return out
