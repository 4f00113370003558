"""Deterministic verdicts for proposed memories (SPEC §4.1): ADD, UPDATE, SUPERSEDE, NOOP.

The rest, and why: docs/design.md, `store/propose/verdicts.py`.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from store.config import Config
from store.errors import InvalidCandidate
from store.files.ids import slugify, unique_id
from store.files.memory import Memory
from store.search.tokenize import identifiers, stem, tokenize

POOL: Final = 20
SHOWN: Final = 3


@dataclass(frozen=True, slots=True)
class MeaningBands:
    """Where a model's cosines sit for one memory said again (best window against the
    candidate's whole text; store.search.vectors.VectorIndex.scores)."""

    unrelated: float
    """Counted as similarity 0: at or above what unrelated rules reach."""
    related: float
    """Counted as the default related band (UPDATE)."""
    duplicate: float
    """Counted as the default duplicate band (NOOP, when the candidate only rewords)."""


MEANING_BANDS: Final = MappingProxyType(
    {"all-MiniLM-L6-v2-int8": MeaningBands(unrelated=0.35, related=0.75, duplicate=0.95)}
)
"""Bands per model, measured with the model itself on hand-written pairs of short coding rules,
each embedded as a memory is (title, then body) against a candidate's text:

* unrelated rules (264 pairs): mean 0.06, 99th percentile 0.36, max 0.41 → `unrelated` 0.35;
* rewordings that keep some words ("Never log tenant API keys" / "Tenant API keys must never
  be logged", "Use Postgres…" / "Persistent data is stored in PostgreSQL"; 27 pairs): 0.47–0.98,
  21 of 27 at or above 0.75;
* another rule on the same subject ("Never log tenant API keys" / "Rotate tenant API keys every
  90 days", "Frontend code lives in web/" / "Backend code lives in server/"; 45 pairs):
  0.15–0.80, one above 0.75 (frontend/backend 0.80), four in 0.70–0.75 → `related` 0.75, the
  lowest band that keeps those out; an UPDATE overwrites the memory, so a false one costs more
  than a missed one, which the near-duplicates page still shows when the words meet;
* paraphrases with almost no word in common ("Tenant credentials must not appear in log
  output", 0.68; 20 pairs): 0.33–0.80, median 0.50, spread like the same-subject rules above: cosine
  cannot tell them apart, so most stay ADD (shown with the memory among the closest);
* the same rule with a clause added 0.89–0.92, a changed port 0.79–0.85, "always" for "never" 0.95–0.97,
  light rewordings 0.80–0.98 → `duplicate` 0.95, with `restates` guarding NOOP.

Two imported memories (engram_mcp.intake.importers adds "(imported from …, section …)" and tags) share
that wording: unrelated rules of one section measured up to 0.69, the same rule from two files
0.73–0.85. WordLlama (static) has no band: its same-subject rules reached 0.81 and imported
unrelated ones 0.83, above its rewordings (0.60–0.93). A model not listed takes no part."""

DEFAULT_RELATED: Final = Config().dedup_related
DEFAULT_DUPLICATE: Final = Config().dedup_duplicate


def meaning_similarity(cosine: float, bands: MeaningBands) -> float:
    """A cosine on the words' scale: piecewise linear through (unrelated, 0), (related, the
    default related band), (duplicate, the default duplicate band) and (1, 1)."""
    knots = (
        (bands.unrelated, 0.0),
        (bands.related, DEFAULT_RELATED),
        (bands.duplicate, DEFAULT_DUPLICATE),
        (1.0, 1.0),
    )
    if cosine <= bands.unrelated:
        return 0.0
    for (x0, y0), (x1, y1) in itertools.pairwise(knots):
        if cosine <= x1:
            return round(y0 + (y1 - y0) * (cosine - x0) / (x1 - x0), 3)
    return 1.0


@dataclass(frozen=True, slots=True)
class Pool:
    """The memories a verdict compares a candidate with (store.propose.pool.similar_pool), and, where the
    vector signal took part, the model and the cosine of the candidate's text with each one's
    best window, by (scope, id)."""

    memories: Sequence[Memory]
    model: str | None = None
    cosines: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def bands(self) -> MeaningBands | None:
        return MEANING_BANDS.get(self.model) if self.model is not None else None


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
    negations: int = 0
    """How often the title and body say `not`, `never`, `no`… (`NEGATION`)."""


MIN_CONTAINMENT_TOKENS: Final = 5
NEGATION: Final = re.compile(
    r"\b(?:not|never|no|none|nothing|nobody|nowhere|neither|nor|without|cannot|avoid)\b|n['’]t\b", re.I
)
"""Words that turn a rule around: a model's cosine hardly sees them."""


def shape(title: str, tags: Sequence[str], body: str) -> Shape:
    title_tokens = frozenset(tokenize(title))
    body_tokens = frozenset(tokenize(" ".join(tags) + "\n" + body))
    return Shape(
        title_tokens,
        body_tokens,
        frozenset(stem(t) for t in title_tokens | body_tokens),
        frozenset(identifiers(title + "\n" + body)),
        len(NEGATION.findall(title + "\n" + body)),
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


def restates(candidate: Shape, memory: Shape) -> bool:
    """The candidate rewords the memory and brings nothing of its own: as many negations, no
    number or identifier the memory lacks, and no more new words (by stem) than it drops, plus
    one. What NOOP by meaning needs besides the duplicate band: a cosine does not see "never"
    turned into "always", a changed number, or an added clause."""
    new = candidate.stems - memory.stems
    return (
        candidate.negations == memory.negations
        and candidate.subjects <= memory.subjects
        and not any(c.isdigit() for word in new for c in word)
        and len(new) <= len(memory.stems - candidate.stems) + 1
    )


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
    pool: Callable[[Candidate], Pool | Sequence[Memory]],
    taken: set[str],
    *,
    duplicate: float,
    related: float,
) -> Verdict:
    """The verdict for one candidate; `taken` collects ids claimed by earlier candidates.
    `pool` gives the memories to compare with, as a `Pool` when the vector signal took part."""
    mine = shape(candidate.title, candidate.tags, candidate.body)
    found = pool(candidate)
    compared = found if isinstance(found, Pool) else Pool(found)
    bands = compared.bands()
    scored: list[tuple[float, float, Memory]] = []
    by_meaning: dict[tuple[str, str], float] = {}
    """Each memory's similarity by meaning alone (on the words' scale), where it has one."""
    for memory in compared.memories:
        if memory.active:
            theirs = memory_shape(memory)
            score = similarity(mine, theirs)
            cosine = compared.cosines.get((memory.scope, memory.id))
            if bands is not None and cosine is not None:
                meant = by_meaning[(memory.scope, memory.id)] = meaning_similarity(cosine, bands)
                score = max(score, meant)
            scored.append((score, closeness(mine, theirs), memory))
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
        if s >= duplicate
        and m.scope in (scope, "user")
        and (
            adds_nothing(mine, memory_shape(m))
            or (by_meaning.get((m.scope, m.id), 0.0) >= duplicate and restates(mine, memory_shape(m)))
        )
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
