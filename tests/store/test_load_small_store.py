"""A task load on a store that fits the budget (SPEC §3.3): what the task routes to first, then
the rest of the store; every active memory is a body, a card or counted in `omitted`."""

from __future__ import annotations

from pathlib import Path

from store.read.load import LoadResult
from store.store import Store
from tests.support.store_helpers import write_memory

TASK = "add a per-tenant burst limit to the rate limiter"
RATE = [  # best match first; the last two share one word with the task, under the relevance floor
    (
        "rate-limiter-token-bucket",
        "Rate limiter uses a token bucket",
        "The rate limiter refills a token bucket; burst limit is the bucket size, per tenant.",
    ),
    (
        "burst-limit-defaults",
        "Burst limit defaults",
        "Default burst limit is 20 requests; the rate limiter reads it at start.",
    ),
    (
        "per-tenant-quotas",
        "Per-tenant quotas live in the tenants table",
        "Each tenant row holds its quota and burst limit for the rate limiter.",
    ),
    ("limiter-redis-keys", "Limiter keys in Redis", "The rate limiter keys buckets by tenant id in Redis."),
    ("rate-limit-headers", "Rate limit headers", "Responses carry the rate limit and remaining requests."),
    (
        "tenant-ids-are-uuids",
        "Tenant ids are UUIDs",
        "Every tenant id is a UUID4 string, never an integer, in logs and URLs alike.",
    ),
    (
        "limits-live-in-settings",
        "Settings hold the service limits",
        "Timeouts, sizes and every other limit come from settings.py, not literals.",
    ),
]
OTHER = [
    (
        "python-type-hints",
        "Python code is fully typed",
        "Every function has type hints; mypy runs strict.",
        "convention",
    ),
    ("python-ruff-format", "Python is formatted by ruff", "ruff format runs in CI.", "convention"),
    (
        "python-docstrings",
        "Docstrings have a summary line",
        "The first line of a docstring is one sentence.",
        "convention",
    ),
    ("python-imports", "Imports are sorted", "ruff sorts imports; no star imports.", "convention"),
    ("python-pathlib", "Paths are pathlib", "Use pathlib.Path, not os.path.", "convention"),
    ("adr-postgres", "We use Postgres", "Postgres was chosen over MySQL in 2021.", "decision"),
    ("adr-celery", "Background jobs run on Celery", "Celery with Redis as the broker.", "decision"),
]
FACTS = [f"unrelated-fact-{n:02}" for n in range(8)]


def _small_store(root: Path) -> Store:
    for memory_id, title, body in RATE:
        write_memory(root, memory_id, title=title, body=body + "\n")
    for memory_id, title, body, type_ in OTHER:
        write_memory(root, memory_id, title=title, body=body + "\n", type=type_)
    for memory_id in FACTS:
        write_memory(
            root, memory_id, title=f"Fact {memory_id}", body="Invoices are exported nightly as CSV.\n"
        )
    return Store(root)


def test_a_task_load_of_a_store_that_fits_gives_all_of_it_routed_first(empty_workspace: Path) -> None:
    """engram's choice: every memory search finds for the task is a body, routed ones first,
    then the hits routing left out (the 6th and 7th) by score; the store's other memories follow
    as cards (nothing of the task answers them: never loaded as bodies), and every active
    memory is shown."""
    store = _small_store(empty_workspace)
    active = {m.id for m in store.view().durable.values() if m.active}
    assert len(active) == 22
    plan = store.route(TASK)
    ranked = [e.id for e in store.search(TASK, limit=22)]
    assert ranked[5:] == ["limits-live-in-settings", "tenant-ids-are-uuids"]  # under the floor
    assert not {"tenant-ids-are-uuids", "limits-live-in-settings"} & {e.memory.id for e in plan.entries}

    result, _ = store.load(TASK, budget=2000)
    assert result.tokens <= 2000
    routed = [e.memory.id for e in plan.entries]
    assert result.body_keys[: len(routed)] == routed
    assert result.body_keys[len(routed) :][:2] == ["limits-live-in-settings", "tenant-ids-are-uuids"]
    assert set(ranked) <= set(result.body_keys)
    assert sorted(result.body_keys + result.card_ids) == sorted(active) and not result.omitted_ids
    assert result.card_ids == sorted(result.card_ids) and not set(result.card_ids) & set(ranked)


def _accounted(result: LoadResult, active: set[str]) -> None:
    """Each active memory is a body, a card or omitted; the text's count says every omitted one."""
    shown = result.body_keys + result.card_ids + result.omitted_ids
    assert shown == result.selected_keys and set(shown) <= active
    assert len(shown) + result.unrouted == len(active)
    omitted = len(result.omitted_ids) + result.unrouted
    assert f", {omitted} omitted." in result.text
    assert (omitted > 0) == ("Omitted by the budget" in result.text)


def test_a_task_load_accounts_for_every_active_memory(empty_workspace: Path) -> None:
    """engram's choice: a memory the answer leaves unnamed is counted in `omitted`, whatever the
    budget; listed in `omitted_ids` when the store's cards fit the budget (the rest is shown)."""
    store = _small_store(empty_workspace)
    active = {m.id for m in store.view().durable.values() if m.active}
    for budget in (100, 300, 450, 600, 1000, 2000):
        result, _ = store.load(TASK, budget=budget)
        _accounted(result, active)
        assert result.tokens <= budget
    listed, _ = store.load(TASK, budget=450)  # the 22 cards fit (313 tokens), not all bodies
    assert listed.unrouted == 0 and listed.card_ids and listed.omitted_ids
    counted, _ = store.load(TASK, budget=300)  # the cards do not: what routing leaves out is counted
    assert counted.unrouted == 22 - len(store.route(TASK).entries)


def test_a_session_load_accounts_for_every_active_memory(empty_workspace: Path) -> None:
    """A session start whose store does not fit counts what routing leaves out in `omitted` too."""
    store = _small_store(empty_workspace)
    active = {m.id for m in store.view().durable.values() if m.active}
    for budget in (100, 200, 2000):
        result, _ = store.load("", budget=budget, objective="rate limiter burst")
        _accounted(result, active)
        assert result.tokens <= budget
