"""The memories a proposal is judged against (store.propose.verdicts): its best matches by words,
those that hold every word of it, and its nearest by meaning, found through the store's search
side (store.finder)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.files.memory import Memory, as_embedded
from store.propose.verdicts import MEANING_BANDS, POOL, Candidate, Pool
from store.search.lexical import key_of

if TYPE_CHECKING:
    from store.read.view import View
    from store.store import Store


def similar_pool(store: Store, candidate: Candidate, view: View | None = None) -> Pool:
    """The active durable memories a verdict compares `candidate` with: the POOL best BM25
    matches of its text, then up to POOL memories that hold every word of it (shortest
    first), so an exact or containing duplicate is seen whatever BM25 ranks above it, then,
    where the vector signal takes part with a model verdicts have bands for, up to POOL
    nearest by meaning, each with its cosine (one embedding of the text, store.propose.verdicts)."""
    view = view or store.view()

    def eligible(memory: Memory) -> bool:
        return memory.tier == "durable" and memory.active and view.durable.get(memory.id) is memory

    text = candidate.text()
    ranked = [h.memory for h in store.finder.lexical.search(text, 100) if eligible(h.memory)][:POOL]
    holding = [m for m in store.finder.lexical.containing(text) if eligible(m)][:POOL]
    pool = {(m.scope, m.id): m for m in [*ranked, *holding]}
    if not store.finder.meaning_ready():
        return Pool(list(pool.values()))
    scored = store.finder.vector_index().scores(
        as_embedded(candidate.title, candidate.tags, candidate.body),
        store.config().vector_model,
        lambda: store.finder.keyed(view),
        view.key,
        want=[key_of(m) for m in pool.values()],
        top=2 * POOL,
    )
    if scored is None or scored.building is not None or scored.model not in MEANING_BANDS:
        return Pool(list(pool.values()))
    by_key = store.finder.keyed(view)
    near = sorted(
        ((v, k) for k, v in scored.scores.items() if k in by_key and eligible(by_key[k])),
        key=lambda row: (-row[0], row[1]),
    )
    cosines = {(k[0], k[2]): v for v, k in near}
    for _, k in near[:POOL]:
        pool.setdefault((k[0], k[2]), by_key[k])
    return Pool(list(pool.values()), scored.model, {k: cosines[k] for k in pool if k in cosines})
