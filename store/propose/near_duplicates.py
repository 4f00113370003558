"""Pairs of memories that say nearly the same thing, and the merge a person can propose for one.

The rest, and why: docs/design.md, `store/propose/near_duplicates.py`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from store.files.memory import Memory
from store.propose.verdicts import (
    MEANING_BANDS,
    Shape,
    jaccard,
    meaning_similarity,
    memory_shape,
    restates,
    same_subject,
    shape,
    similarity,
)
from store.search.lexical import Key, key_of
from store.search.tokenize import stem, tokenize

if TYPE_CHECKING:
    from store.read.view import View
    from store.store import Store

CANDIDATES: Final = 8
"""Memories compared with each memory: those sharing the most rare words with it."""
NEIGHBOURS: Final = 8
"""Memories compared with each memory by meaning: its nearest of its scope."""
Meaning = tuple[str, Sequence[tuple[Memory, Memory, float]]]
"""A model's name and pairs of memories with their cosine (`meaning_neighbours`)."""
MIN_SHARED: Final = 2
"""Rare words two memories must share before they are compared."""
SHOWN: Final = 200
"""Pairs returned at most, the most similar first."""
_PARAGRAPH: Final = re.compile(r"\n\s*\n")


@dataclass(frozen=True, slots=True)
class Pair:
    keeper: Memory
    """What a merge updates: the one whose words hold all of the other's, else the one updated
    longer ago (then by id), so a merged pair keeps its keeper."""
    other: Memory
    similarity: float
    duplicate: bool
    """At or above the duplicate band: a proposal of the one would be NOOP against the other."""
    contained: bool
    """Every word (stem) of `other` is in `keeper` already. Not that it says nothing more: a
    "never" and an "always" share their words, so the page only points the person at both."""


def _common(count: int) -> int:
    """The most memories a word may appear in and still find pairs."""
    return max(20, min(50, count // 50))


def near_duplicates(
    memories: Sequence[Memory], *, related: float, duplicate: float, meaning: Meaning | None = None
) -> list[Pair]:
    """The pairs among `memories` (active durable ones are considered), most similar first;
    `meaning`: each memory's nearest by meaning, where the vector signal takes part."""
    kept = [m for m in memories if m.tier == "durable" and m.active]
    meant = _by_meaning(kept, meaning)
    postings: dict[tuple[str, str], list[int]] = defaultdict(list)
    words: list[frozenset[str]] = []
    titles: list[frozenset[str]] = []
    bodies: list[str] = []
    for n, memory in enumerate(kept):  # stems alone here: a whole shape is made for candidates only
        bodies.append(memory.body)
        titles.append(frozenset(tokenize(memory.title)))
        words.append(
            frozenset(stem(t) for t in tokenize(f"{memory.title}\n{' '.join(memory.tags)}\n{bodies[-1]}"))
        )
        for word in words[-1]:
            postings[(memory.scope, word)].append(n)
    common = _common(len(kept))
    shared: list[Counter[int]] = [Counter() for _ in kept]
    for holders in postings.values():
        if 1 < len(holders) <= common:
            for a in holders:
                shared[a].update(b for b in holders if b > a)
    shapes: dict[int, Shape] = {}

    def shape_of(n: int) -> Shape:
        if n not in shapes:
            shapes[n] = shape(kept[n].title, kept[n].tags, bodies[n])
        return shapes[n]

    least = max(0.0, 2 * related - 1)
    """Half the similarity is the titles' Jaccard, half the bodies' overlap, each at most 1: with
    either below this, the band cannot be reached."""
    todo = {pair for pair, score in meant.items() if score >= related}
    for a, counts in enumerate(shared):
        for b, count in counts.most_common(CANDIDATES):
            if count < MIN_SHARED:
                break
            if (a, b) not in meant and (
                jaccard(titles[a], titles[b]) < least
                or len(words[a] & words[b]) < least * min(len(words[a]), len(words[b]))
            ):
                continue  # titles or words too far apart to reach the band
            todo.add((a, b))
    pairs = []
    for a, b in sorted(todo):
        pair = _pair(kept[a], shape_of(a), kept[b], shape_of(b), related, duplicate, meant.get((a, b)))
        if pair is not None:
            pairs.append(pair)
    pairs.sort(key=lambda p: (-p.similarity, p.keeper.id, p.other.id))
    return pairs[:SHOWN]


def _by_meaning(kept: Sequence[Memory], meaning: Meaning | None) -> dict[tuple[int, int], float]:
    """The similarity by meaning (on the words' scale) of each pair `meaning` holds among
    `kept`, by their positions (smaller first); nothing for a model without bands."""
    bands = MEANING_BANDS.get(meaning[0]) if meaning is not None else None
    if meaning is None or bands is None:
        return {}
    at = {(m.scope, m.id, m.hash): n for n, m in enumerate(kept)}
    found: dict[tuple[int, int], float] = {}
    for one, two, cosine in meaning[1]:
        a, b = at.get((one.scope, one.id, one.hash)), at.get((two.scope, two.id, two.hash))
        if a is not None and b is not None and a != b and one.scope == two.scope:
            found[(min(a, b), max(a, b))] = meaning_similarity(cosine, bands)
    return found


def _pair(
    a: Memory,
    shape_a: Shape,
    b: Memory,
    shape_b: Shape,
    related: float,
    duplicate: float,
    meant: float | None = None,
) -> Pair | None:
    """The pair, when a proposal of the one would be an UPDATE of the other (`meant`: their
    similarity by meaning, where the vector signal took part)."""
    words = max(similarity(shape_a, shape_b), similarity(shape_b, shape_a))
    score = max(words, meant or 0.0)
    if score < related or not same_subject(shape_a, shape_b):
        return None
    same = words >= duplicate or (
        (meant or 0.0) >= duplicate and (restates(shape_a, shape_b) or restates(shape_b, shape_a))
    )
    if shape_a.stems <= shape_b.stems and not shape_b.stems <= shape_a.stems:
        a, shape_a, b, shape_b = b, shape_b, a, shape_a  # the one holding all the other says is kept
    elif not shape_b.stems <= shape_a.stems and (b.updated, b.id) < (a.updated, a.id):
        a, shape_a, b, shape_b = b, shape_b, a, shape_a
    return Pair(a, b, score, same, shape_b.stems <= shape_a.stems)


def merge_candidate(pair: Pair) -> dict[str, Any]:
    """The candidate of the merge proposal: an UPDATE of the keeper holding what the other adds."""
    keeper, other = pair.keeper, pair.other
    known = memory_shape(keeper).stems
    added = [
        paragraph.strip()
        for paragraph in _PARAGRAPH.split(other.body)
        if paragraph.strip() and not shape("", (), paragraph).stems <= known
    ]
    body = "\n\n".join([keeper.body.rstrip(), *added]) if added else keeper.body
    candidate: dict[str, Any] = {
        "type": keeper.type,
        "id": keeper.id,
        "scope": keeper.scope,
        "title": keeper.title,
        "body": body,
        "tags": list(dict.fromkeys([*keeper.tags, *other.tags])),
        "paths": list(dict.fromkeys([*keeper.paths, *other.paths])),
    }
    refs = list(dict.fromkeys([*keeper.refs, *other.refs]))
    if refs:
        candidate["refs"] = refs
    return candidate


def meaning_neighbours(
    store: Store, view: View | None = None, *, top: int
) -> tuple[str, list[tuple[Memory, Memory, float]]] | None:
    """Each active durable memory's `top` nearest of its own scope by meaning, with their
    cosine (store.search.vectors.VectorIndex.neighbours), for the near-duplicates page; None
    while the vector signal is off, loading or building, or has a model verdicts have no
    bands for."""
    view = view or store.view()
    if not store.finder.meaning_ready():
        return None
    by_key = store.finder.keyed(view)
    groups: dict[str, list[Key]] = {}
    for memory in view.durable.values():
        if memory.active:
            groups.setdefault(memory.scope, []).append(key_of(memory))
    found = store.finder.vector_index().neighbours(
        store.config().vector_model, lambda: by_key, view.key, groups.values(), top
    )
    if found is None or found[0] not in MEANING_BANDS:
        return None
    return found[0], [(by_key[a], by_key[b], cosine) for a, b, cosine in found[1]]
