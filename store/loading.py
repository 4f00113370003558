"""What a task or a session start loads (SPEC §4.2): the routed memories under a budget, a small
store whole, a body by id; the Store's `load` and `route` are these."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from store.code import staleness
from store.errors import Words
from store.read.load import LoadResult, Selected, Why, plain_words, single, tiered
from store.read.route import RouteEntry, RoutePlan, route, task_classes, unrouted
from store.read.session import (
    WorkingTree,
    cards_fit,
    routed_why,
    session_route,
    whole_store,
    whole_why,
    working_tree,
)
from store.read.variants import variant_text
from store.safety import untrusted

if TYPE_CHECKING:
    from store.config import Config
    from store.files.memory import Memory
    from store.finder import Finder
    from store.read.route import RoutePool
    from store.read.view import View


class Reader(Protocol):
    """What loading reads of a store (store.store.Store is one)."""

    workspace: Path
    objective: str
    finder: Finder

    def config(self) -> Config: ...
    def view(self) -> View: ...
    def fetch(self, memory_id: object) -> Memory: ...
    def route_pool(self, view: View) -> RoutePool: ...
    def marks(self, memories: Iterable[Memory]) -> dict[str, tuple[staleness.Mark, ...]]: ...
    def marker(self, likely: Iterable[Memory] = ()) -> Callable[[Memory], tuple[staleness.Mark, ...]]: ...


def route_task(store: Reader, task: str, view: View | None = None) -> RoutePlan:
    """The routing plan for a task (store.read.route), scored by search's own scores."""
    view = view or store.view()
    config = store.config()
    return route(
        task,
        store.route_pool(view),
        role=config.role,
        classes=task_classes(config.routes),
        scores=store.finder.scores(view),
    )


def load(
    store: Reader,
    query: str = "",
    *,
    memory_id: str | None = None,
    budget: int | None = None,
    disclosure: str = "tiered",
    full: bool = False,
    objective: str | None = None,
    include_stale: bool = False,
    words: Words = plain_words,
    counted: Words | None = None,
) -> tuple[LoadResult, str]:
    """(result, task class). `memory_id` loads that body only and counts as a fetch.
    A stale memory (store.code.staleness) is a card with its reason unless `include_stale`;
    the next steps the answer names are in the caller's `words`, counted against the
    budget in `counted` (store.read.load.tiered)."""
    config = store.config()
    objective = (objective if objective is not None else store.objective).strip()
    if memory_id is not None:
        memory = store.fetch(memory_id)
        text, why = variant_text(memory, config.rule_variant, objective)
        result = single(memory, text, store.marks([memory]).get(staleness.key(memory), ()))
        if why:
            result.reasons[memory.id] += f"; {why}"
        return result, "by-id"
    view = store.view()
    session = not query.strip() and not full  # a session start: what the working tree says
    tree = working_tree(store.workspace) if session else WorkingTree()
    pool = store.route_pool(view)
    if session:
        plan = session_route(
            objective or tree.words,
            tree.paths,
            pool,
            role=config.role,
            classes=task_classes(config.routes),
            scores=store.finder.scores(view, fused=False),
            quote=untrusted.line,
        )
    else:
        plan = route_task(store, query or objective, view)

    def chosen(entries: Iterable[RouteEntry], reason: str = "") -> list[Selected]:
        shown = []
        for entry in entries:  # thousands for a class
            text, why = None, ""
            if entry.memory.has_variants:
                text, why = variant_text(entry.memory, config.rule_variant, objective)
            said = (reason or entry.reason) + (f"; {why}" if why else "")
            shown.append(Selected(entry.memory, said, text))
        return shown

    selected = chosen(plan.entries)
    if full:
        taken = {s.memory.id for s in selected}
        rest = sorted((m for m in pool.memories if m.id not in taken), key=lambda m: m.id)
        selected += chosen((RouteEntry(m, 0.0, "full", "") for m in rest), "full: every active memory")
        budget, disclosure = config.full_cap_tokens, "bodies"
    budget = budget or config.budget_tokens
    left = 0  # what the task does not route to: shown after it when the store fits, else counted
    cards_from: int | None = None
    if not full and not session and cards_fit(pool.memories, budget):
        others = unrouted(plan, pool)  # what answers the task (a score) first, then cards of the rest
        selected += chosen(others)
        cards_from = len(selected) - sum(1 for entry in others if not entry.score)
    elif not full:
        left = len(pool.memories) - len(plan.entries)
    wanted = " ".join(objective.lower().split())
    notes = [n for n in view.notes.values() if wanted and " ".join(n.objective.lower().split()) == wanted]

    def load(
        selected: list[Selected], why: Why | None, left: int = 0, cards_from: int | None = None
    ) -> LoadResult:
        return tiered(
            selected,
            budget=budget,
            disclosure=disclosure,
            title=f"task class {plan.task_class}, budget {budget} tokens",
            note_cards=notes,
            mark=store.marker(s.memory for s in selected[:64]),  # store.code.staleness: what shows
            show_stale=include_stale,
            words=words,
            counted=counted,
            why=why,
            unrouted=left,
            cards_from=cards_from,
        )

    if session and pool.memories and disclosure == "tiered" and cards_fit(pool.memories, budget):
        whole = whole_store(pool, plan, role=config.role)  # a small store: all of it, if it fits
        result = load(chosen(whole), whole_why(len(whole)))
        if not result.omitted_ids:
            return result, plan.task_class
    routed = routed_why(tree, objective, len(pool.memories)) if session else None
    return load(selected, routed, left, cards_from), plan.task_class
