"""Deterministic verdicts for proposed memories (SPEC §4.1): ADD, UPDATE, SUPERSEDE, NOOP.

Similarity (0–1) is half title overlap (Jaccard of title tokens) and half body containment
(the share of the smaller body's tokens found in the other; Jaccard when a body has under 5
tokens), so a restatement with a short body still scores as the memory it restates. Only the
20 best BM25 matches are compared, so the cost does not grow with the store. Same input, same store →
same verdicts; ties go to the smaller id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from store.errors import StoreError
from store.ids import slugify, unique_id
from store.memory import Memory
from store.tokenize import tokenize

POOL: Final = 20
SHOWN: Final = 3


class InvalidCandidate(StoreError):
    code = "ENGRAM_VALIDATION"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A proposed memory after redaction; `id` and `supersedes` are the proposer's wishes."""

    type: str
    title: str
    body: str
    scope: str = "project"
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    id: str | None = None
    supersedes: str | None = None

    def text(self) -> str:
        return f"{self.title}\n{' '.join(self.tags)}\n{self.body}"


@dataclass(frozen=True, slots=True)
class Similar:
    id: str
    title: str
    similarity: float


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: str
    """ADD, UPDATE, SUPERSEDE or NOOP."""
    id: str
    """The id the candidate gets (ADD, SUPERSEDE) or touches (UPDATE, NOOP)."""
    target: str | None = None
    target_hash: str | None = None
    similar: tuple[Similar, ...] = field(default=())

    def line(self) -> str:
        if self.kind in ("ADD", "NOTE"):
            return self.kind
        if self.kind == "NOOP":
            return f"NOOP duplicate of {self.target}"
        return f"{self.kind} {self.target}"

    def same_as(self, other: Verdict) -> bool:
        return (self.kind, self.id, self.target, self.target_hash) == (
            other.kind,
            other.id,
            other.target,
            other.target_hash,
        )


Shape = tuple[frozenset[str], frozenset[str]]
"""(title tokens, tag and body tokens) of a memory or candidate."""
MIN_CONTAINMENT_TOKENS: Final = 5


def shape(title: str, tags: Sequence[str], body: str) -> Shape:
    return frozenset(tokenize(title)), frozenset(tokenize(" ".join(tags) + "\n" + body))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def similarity(a: Shape, b: Shape) -> float:
    (title_a, body_a), (title_b, body_b) = a, b
    small = min(len(body_a), len(body_b))
    body = len(body_a & body_b) / small if small >= MIN_CONTAINMENT_TOKENS else _jaccard(body_a, body_b)
    return round(0.5 * _jaccard(title_a, title_b) + 0.5 * body, 3)


def memory_shape(memory: Memory) -> Shape:
    """A memory's token sets, cached by its content hash (the same memory recurs across proposals)."""
    key = (memory.scope, memory.tier, memory.id, memory.hash)
    found = _shapes.get(key)
    if found is None:
        found = _shapes[key] = shape(memory.title, memory.tags, memory.body)
        if len(_shapes) > 4096:
            _shapes.pop(next(iter(_shapes)))
    return found


_shapes: dict[tuple[str, str, str, str], Shape] = {}


def decide(
    candidate: Candidate,
    durable: Mapping[str, Memory],
    pool: Callable[[str], Sequence[Memory]],
    taken: set[str],
    *,
    duplicate: float,
    related: float,
) -> Verdict:
    """The verdict for one candidate; `taken` collects ids claimed by earlier candidates."""
    mine = shape(candidate.title, candidate.tags, candidate.body)
    scored = sorted(
        ((similarity(mine, memory_shape(m)), m) for m in pool(candidate.text()) if m.active),
        key=lambda pair: (-pair[0], pair[1].id),
    )
    similar = tuple(Similar(m.id, m.title, s) for s, m in scored[:SHOWN] if s > 0)
    if candidate.supersedes is not None:
        target = durable.get(candidate.supersedes)
        if target is None or not target.active:
            raise InvalidCandidate(
                f"supersedes {candidate.supersedes!r}, which is not an active memory: search for the right id"
            )
        new_id = _new_id(candidate, durable, taken)
        return Verdict("SUPERSEDE", new_id, target.id, target.hash, similar)
    if candidate.id is not None and candidate.id in durable:
        target = durable[candidate.id]
        if not target.active:
            raise InvalidCandidate(
                f"{candidate.id!r} is superseded: propose a new memory or supersede its successor"
            )
        return Verdict("UPDATE", target.id, target.id, target.hash, similar)
    if scored and scored[0][0] >= duplicate:
        best = scored[0][1]
        return Verdict("NOOP", best.id, best.id, best.hash, similar)
    if scored and scored[0][0] >= related:
        best = scored[0][1]
        return Verdict("UPDATE", best.id, best.id, best.hash, similar)
    return Verdict("ADD", _new_id(candidate, durable, taken), similar=similar)


def _new_id(candidate: Candidate, durable: Mapping[str, Memory], taken: set[str]) -> str:
    claimed = set(durable) | taken
    if candidate.id is not None and candidate.id not in claimed:
        chosen = candidate.id
    else:
        chosen = unique_id(candidate.id or slugify(candidate.title), claimed)
    taken.add(chosen)
    return chosen
