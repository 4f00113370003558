"""Deterministic verdicts for proposed memories (SPEC §4.1): ADD, UPDATE, SUPERSEDE, NOOP.

Similarity (0–1) is half title overlap (Jaccard of title tokens) and half body overlap. Body
overlap is 1 when the candidate keeps all of a memory's tag and body tokens (the same text,
or the text with something added); otherwise it is containment from the smaller side (the
share of the smaller body's tokens found in the other), or Jaccard when a body has under 5
tokens, so a restatement with a short body still scores as the memory it restates.

What the candidate adds decides between NOOP and UPDATE, so similarity is not the whole
verdict:
- NOOP ("already known") needs similarity in the duplicate band *and* a candidate that adds
  nothing: every token of its title, tags and body (compared by Snowball stem) is already in
  the memory. The same text again is NOOP on a store of any size; the text with a clause
  added, or with a number changed (`port 5432` → `port 5433`), is not.
- UPDATE (by similarity) needs similarity in the related band (duplicate band included) and
  the same subject: a candidate that drops one of the memory's identifiers and brings
  another (`FOO_BAR` → `FOO_BAZ`, `api/tax.py` → `api/vat.py`; see
  store.search.tokenize.identifiers) is about another thing, so it is an ADD shown next to that
  memory, never an UPDATE that would overwrite it. A changed number keeps the subject: the
  same fact with a new value is an UPDATE.

The pool compared with is the 20 best BM25 matches of the candidate's text plus up to 20
memories that hold every word of it (found by intersecting postings, shortest first), so the
same text again is seen whatever BM25 ranks above it, and the cost does not grow with the
store. Same input, same store → same verdicts: the pool and the scores are ordered; among
equally similar memories the one whose words are most nearly the candidate's comes first,
then the smaller id, then scope.

Verdicts are scope-true (issue 9): an UPDATE or SUPERSEDE target lives in the candidate's own
scope, so a project proposal never rewrites a user-scope memory (shared by every workspace),
nor a user proposal a project memory. A project candidate that names a user memory's id is an
ADD of a project memory with that id, which shadows the user one in this workspace
(`Verdict.shadows`); one that merely resembles a user memory is an ADD shown with it among the
closest memories. NOOP ("already known") may name a memory of the candidate's scope or a user
memory (user memories load in every workspace), never a project memory for a user candidate:
writing nothing is safe, and a user memory is wanted elsewhere too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from store.errors import InvalidCandidate
from store.files.ids import slugify, unique_id
from store.files.memory import Memory
from store.search.tokenize import identifiers, stem, tokenize

POOL: Final = 20
SHOWN: Final = 3


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
    always: bool | None = None
    """`always: true` puts the memory in the core tier; None keeps an UPDATE target's setting
    (a new memory gets false)."""
    refs: tuple[str, ...] | None = None
    """Code references (store.code.refs); None: not given, so they are extracted from the text."""
    valid_until: str = ""
    review_after: str = ""

    def text(self) -> str:
        return f"{self.title}\n{' '.join(self.tags)}\n{self.body}"


@dataclass(frozen=True, slots=True)
class Similar:
    id: str
    title: str
    similarity: float
    scope: str = "project"


@dataclass(frozen=True, slots=True)
class Known:
    """The durable memories a verdict may name. `merged` is what reads see (a project memory
    shadows a user memory of the same id); `hidden_user` finds a user memory so shadowed."""

    merged: Mapping[str, Memory]
    hidden_user: Callable[[str], Memory | None] = lambda _id: None

    def in_scope(self, scope: str, memory_id: str) -> Memory | None:
        found = self.merged.get(memory_id)
        if found is None or found.scope == scope:
            return found
        return self.hidden_user(memory_id) if scope == "user" else None


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: str
    """ADD, UPDATE, SUPERSEDE or NOOP."""
    id: str
    """The id the candidate gets (ADD, SUPERSEDE) or touches (UPDATE, NOOP)."""
    target: str | None = None
    target_hash: str | None = None
    similar: tuple[Similar, ...] = field(default=())
    shadows: str | None = None
    """For a project ADD that takes a user memory's id: `user:<id>`, the memory it hides here."""

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> Verdict:
        """A verdict from its stored form (unknown keys ignored)."""
        return cls(
            kind=str(record.get("kind")),
            id=str(record.get("id")),
            target=record.get("target"),
            target_hash=record.get("target_hash"),
            shadows=record.get("shadows"),
        )

    def record(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "kind": self.kind,
            "id": self.id,
            "target": self.target,
            "target_hash": self.target_hash,
        }
        if self.shadows:
            found["shadows"] = self.shadows
        return found

    def line(self) -> str:
        if self.kind in ("ADD", "NOTE"):
            return self.kind
        if self.kind == "NOOP":
            return f"NOOP duplicate of {self.target}"
        return f"{self.kind} {self.target}"

    def same_as(self, other: Verdict) -> bool:
        """Same kind, id and target (by content hash); `similar` and `shadows` are context."""
        return (self.kind, self.id, self.target, self.target_hash) == (
            other.kind,
            other.id,
            other.target,
            other.target_hash,
        )


@dataclass(frozen=True, slots=True)
class Shape:
    """What verdicts compare of a memory or candidate."""

    title: frozenset[str]
    body: frozenset[str]
    """Tag and body tokens."""
    stems: frozenset[str]
    """The Snowball stem of every title, tag and body token."""
    subjects: frozenset[str]
    """Identifiers of the title and body, digits masked (store.search.tokenize.identifiers)."""


MIN_CONTAINMENT_TOKENS: Final = 5


def shape(title: str, tags: Sequence[str], body: str) -> Shape:
    title_tokens = frozenset(tokenize(title))
    body_tokens = frozenset(tokenize(" ".join(tags) + "\n" + body))
    return Shape(
        title_tokens,
        body_tokens,
        frozenset(stem(t) for t in title_tokens | body_tokens),
        frozenset(identifiers(title + "\n" + body)),
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def similarity(candidate: Shape, memory: Shape) -> float:
    """Half title Jaccard, half body overlap (1 when the candidate keeps all of the memory's
    body; else containment from the smaller side, or Jaccard under 5 tokens)."""
    mine, theirs = candidate.body, memory.body
    small = min(len(mine), len(theirs))
    if theirs and theirs <= mine:
        body = 1.0
    elif small >= MIN_CONTAINMENT_TOKENS:
        body = len(mine & theirs) / small
    else:
        body = jaccard(mine, theirs)
    return round(0.5 * jaccard(candidate.title, memory.title) + 0.5 * body, 3)


def closeness(candidate: Shape, memory: Shape) -> float:
    """Jaccard of all the words (by stem): among equally similar memories, the one whose text
    is most nearly the candidate's comes first (the exact duplicate before a longer memory)."""
    return jaccard(candidate.stems, memory.stems)


def adds_nothing(candidate: Shape, memory: Shape) -> bool:
    """Every word of the candidate (by stem) is already in the memory."""
    return candidate.stems <= memory.stems


def same_subject(candidate: Shape, memory: Shape) -> bool:
    """False when the candidate drops one of the memory's identifiers and brings another."""
    return not (candidate.subjects - memory.subjects and memory.subjects - candidate.subjects)


def memory_shape(memory: Memory) -> Shape:
    """A memory's shape, cached by its content hash (the same memory recurs across proposals)."""
    key = (memory.scope, memory.tier, memory.id, memory.hash)
    found = _shapes.get(key)
    if found is None:
        found = shape(memory.title, memory.tags, memory.body)
        with _shapes_lock:
            _shapes[key] = found
            while len(_shapes) > SHAPE_CACHE:
                _shapes.pop(next(iter(_shapes)))
    return found


SHAPE_CACHE: Final = 4096
_shapes: dict[tuple[str, str, str, str], Shape] = {}
_shapes_lock: Final = threading.Lock()


def decide(
    candidate: Candidate,
    known: Known,
    pool: Callable[[Candidate], Sequence[Memory]],
    taken: set[str],
    *,
    duplicate: float,
    related: float,
) -> Verdict:
    """The verdict for one candidate; `taken` collects ids claimed by earlier candidates."""
    mine = shape(candidate.title, candidate.tags, candidate.body)
    scored: list[tuple[float, float, Memory]] = []
    for memory in pool(candidate):
        if memory.active:
            theirs = memory_shape(memory)
            scored.append((similarity(mine, theirs), closeness(mine, theirs), memory))
    scored.sort(key=lambda row: (-row[0], -row[1], row[2].id, row[2].scope))
    similar = tuple(Similar(m.id, m.title, s, m.scope) for s, _, m in scored[:SHOWN] if s > 0)
    scope = candidate.scope
    if candidate.supersedes is not None:
        target = known.in_scope(scope, candidate.supersedes)
        if target is None:
            elsewhere = known.merged.get(candidate.supersedes)
            if elsewhere is not None:
                raise InvalidCandidate(
                    f"supersedes {candidate.supersedes!r}, a {elsewhere.scope}-scope memory; a {scope} "
                    f"candidate replaces only {scope} memories: give it scope {elsewhere.scope!r} "
                    "to replace that memory, or leave out supersedes"
                )
            raise InvalidCandidate(
                f"supersedes {candidate.supersedes!r}, which is not an active memory: search for the right id"
            )
        if not target.active:
            raise InvalidCandidate(
                f"supersedes {candidate.supersedes!r}, which is not an active memory: search for the right id"
            )
        new_id = _new_id(candidate, known.merged, taken)
        return Verdict("SUPERSEDE", new_id, target.id, target.hash, similar)
    if candidate.id is not None:
        target = known.in_scope(scope, candidate.id)
        if target is not None:
            if not target.active:
                raise InvalidCandidate(
                    f"{candidate.id!r} is superseded: propose a new memory or supersede its successor"
                )
            return Verdict("UPDATE", target.id, target.id, target.hash, similar)
        hidden = known.in_scope("user", candidate.id) if scope == "project" else None
        if hidden is not None and candidate.id not in taken:
            taken.add(candidate.id)
            return Verdict("ADD", candidate.id, similar=similar, shadows=f"user:{candidate.id}")
    noop = [
        m
        for s, _, m in scored
        if s >= duplicate and m.scope in (scope, "user") and adds_nothing(mine, memory_shape(m))
    ]
    if noop:
        best = noop[0]
        return Verdict("NOOP", best.id, best.id, best.hash, similar)
    own = [
        m for s, _, m in scored if s >= related and m.scope == scope and same_subject(mine, memory_shape(m))
    ]
    if own:
        best = own[0]
        return Verdict("UPDATE", best.id, best.id, best.hash, similar)
    return Verdict("ADD", _new_id(candidate, known.merged, taken), similar=similar)


def _new_id(candidate: Candidate, durable: Mapping[str, Memory], taken: set[str]) -> str:
    claimed = set(durable) | taken
    if candidate.id is not None and candidate.id not in claimed:
        chosen = candidate.id
    else:
        chosen = unique_id(candidate.id or slugify(candidate.title), claimed)
    taken.add(chosen)
    return chosen
