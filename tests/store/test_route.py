"""Routing (SPEC §3.2): task classes and the load order core → class → relevant → path."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from store.code.globs import glob_match
from store.read.route import RoutePool, classify, named_paths, task_classes
from store.read.session import SESSION_RULES, session_route
from store.store import Store
from tests.support.store_helpers import write_memory

TIER_RANK = {"core": 0, "class": 1, "relevant": 2, "path": 3, "class-rest": 4}


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("fix the crash in the invoice export", "bugfix"),
        ("add pytest coverage for the tax module", "test"),
        ("publish the release and update the changelog", "release"),
        ("deploy the docker image to production", "ops"),
        ("think about lunch", "general"),
        ("", "general"),
        ("write an alembic schema migration for invoices", "migration"),
    ],
)
def test_tasks_are_classified(workspace: Path, task: str, expected: str) -> None:
    """Built-in classes and the config's `migration` class are recognised."""
    store = Store(workspace)
    assert store.route(task).task_class == expected


def test_config_routes_extend_the_builtin_classes() -> None:
    """A config class is added next to the built-ins; lists of a built-in are extended."""
    merged = task_classes({"migration": {"keywords": ["alembic"]}, "bugfix": {"keywords": ["oops"]}})
    assert merged["migration"]["keywords"] == ["alembic"]
    assert "oops" in merged["bugfix"]["keywords"] and "crash" in merged["bugfix"]["keywords"]
    assert classify("oops", merged) == "bugfix"


def test_entries_come_in_load_order_core_class_relevant_path(workspace: Path) -> None:
    """Tiers never go backwards, and each entry's reason names its tier."""
    plan = Store(workspace).route("fix the crash in api/billing/tax.py rounding of invoice lines")
    tiers = [e.tier for e in plan.entries]
    assert tiers == sorted(tiers, key=TIER_RANK.__getitem__)
    assert {"core", "class", "relevant", "path"} <= set(tiers)
    for entry in plan.entries:
        prefix = {
            "core": "core:",
            "class": "class bugfix:",
            "relevant": "relevant: bm25",
            "path": "path:",
            "class-rest": "class bugfix:",
        }
        assert entry.reason.startswith(prefix[entry.tier])


def test_core_holds_the_always_memories(workspace: Path) -> None:
    """Every always:true memory for the role is in core, and only those."""
    plan = Store(workspace).route("think about lunch")
    core = {e.memory.id for e in plan.entries if e.tier == "core"}
    assert core == {
        "money-is-integer-cents",
        "never-edit-applied-migrations",
        "no-secrets-in-repo",
        "run-make-check-before-pushing",
        "answer-briefly-show-diffs",
    }


def test_reviewer_only_memories_stay_out_of_core_and_class_for_the_default_role(workspace: Path) -> None:
    """roles [reviewer] keeps a memory out of core and class unless the role is reviewer."""
    write_memory(workspace, "reviewer-always", title="Reviewer core rule", always=True, roles=["reviewer"])
    default = Store(workspace).route("review this pr and give feedback")
    assert default.task_class == "review"
    early = {e.memory.id for e in default.entries if e.tier in ("core", "class")}
    assert "reviewer-always" not in early
    assert "prefer-small-focused-prs" not in early
    assert "reviewers-check-migration-locks" not in early

    config = workspace / ".engram" / "config.json"
    data = orjson.loads(config.read_bytes())
    config.write_bytes(orjson.dumps({**data, "role": "reviewer"}))
    reviewer = Store(workspace).route("review this pr and give feedback")
    tiers = {e.memory.id: e.tier for e in reviewer.entries}
    assert tiers["reviewer-always"] == "core"
    assert tiers["prefer-small-focused-prs"] == "class"


def test_duplicates_keep_their_first_position(workspace: Path) -> None:
    """A memory matching several tiers appears once, in the earliest tier."""
    plan = Store(workspace).route("add pytest tests for tests/test_tax.py")
    ids = [e.memory.id for e in plan.entries]
    assert len(ids) == len(set(ids))
    tiers = {e.memory.id: e.tier for e in plan.entries}
    assert tiers["run-make-check-before-pushing"] == "core"  # also tagged testing (class test)
    assert tiers["test-layout-and-markers"] == "class"  # also matches tests/** (path)


def test_superseded_memories_are_not_routed(workspace: Path) -> None:
    """Only active memories are routed."""
    plan = Store(workspace).route("lock python dependencies with pip-tools pip-compile")
    assert "use-pip-tools-for-locking" not in [e.memory.id for e in plan.entries]


def test_the_path_tier_matches_globs_against_named_paths(empty_workspace: Path) -> None:
    """`api/billing/tax.py` matches `api/billing/**` and `**/*.py`, not `web/**`."""
    write_memory(empty_workspace, "billing-glob", title="Quarter one", paths=["api/billing/**"])
    write_memory(empty_workspace, "python-glob", title="Quarter two", paths=["**/*.py"])
    write_memory(empty_workspace, "web-glob", title="Quarter three", paths=["web/**"])
    plan = Store(empty_workspace).route("look at api/billing/tax.py")
    entries = {e.memory.id: e for e in plan.entries}
    assert set(entries) == {"billing-glob", "python-glob"}
    assert entries["billing-glob"].tier == "path"
    assert entries["billing-glob"].reason == "path: api/billing/tax.py matches api/billing/**"
    assert entries["python-glob"].reason == "path: api/billing/tax.py matches **/*.py"


@pytest.mark.parametrize(
    ("path", "pattern", "matches"),
    [
        ("api/billing/tax.py", "api/billing/**", True),
        ("api/billing/tax.py", "**/*.py", True),
        ("tax.py", "**/*.py", True),
        ("./api/billing/tax.py", "api/**/*.py", True),
        ("api/billing/tax.py", "api/*.py", False),
        ("api/billing/tax.py", "web/**", False),
        ("api/billing/tax.pyc", "**/*.py", False),
    ],
)
def test_glob_matching(path: str, pattern: str, matches: bool) -> None:
    """`**` spans folders, `*` stays within one."""
    assert glob_match(path, pattern) is matches


def test_paths_named_in_a_task_are_found() -> None:
    """Paths and file names are picked out of free text."""
    assert named_paths("fix api/billing/tax.py and README.md, then web/src/") == [
        "api/billing/tax.py",
        "README.md",
        "web/src/",
    ]


def test_the_relevance_floor_never_drops_the_few_best_hits(empty_workspace: Path) -> None:
    """SPEC §3.2 keeps a floor for the relevant tier (a share of the best score), but the best
    MIN_RELEVANT hits are relevant whatever their share: a long memory that mentions the word
    once is routed next to a short one that is all about it."""
    write_memory(empty_workspace, "argo-short", title="Argo rollouts", body="Argo rolls out every deploy.\n")
    long_body = " ".join(f"word{n}" for n in range(300)) + " argo\n"
    write_memory(empty_workspace, "argo-long", title="Miscellaneous notes", body=long_body)
    for n in range(4):
        write_memory(empty_workspace, f"filler-{n}", title=f"Filler {n}", body="Nothing to see.\n")
    store = Store(empty_workspace)
    scores = store.finder.scores(store.view())("argo")
    assert scores["argo-long"] < 0.3 * scores["argo-short"]  # the floor alone would drop it
    relevant = [e.memory.id for e in store.route("argo").entries if e.tier == "relevant"]
    assert relevant == ["argo-short", "argo-long"]


def test_a_session_routes_the_project_rules_after_the_core_tier(tmp_path: Path) -> None:
    """Issue 21: path-matched project rules, then up to SESSION_RULES pathless ones (best
    scored first), then memories a changed file matches, then the plain route; a user-scope
    rule and a rule for other paths are not pulled in."""
    root = tmp_path / "ws"
    Store(root).init()
    write_memory(root, "core", title="Core fact", always=True)
    write_memory(root, "billing-rule", title="Billing is in cents", type="rule", paths=["billing/**"])
    write_memory(root, "css-rule", title="CSS uses tokens", type="rule", paths=["web/**"])
    write_memory(root, "tax-fact", title="Tax tables", refs=["billing/tax.py#RATE"])
    for n in range(SESSION_RULES + 3):
        write_memory(root, f"rule-{n:02d}", title=f"Project rule {n}", type="convention")
    write_memory(root, "rule-vat", title="VAT rounding rule", type="rule", body="Round VAT per line.\n")
    store = Store(root)
    pool = RoutePool.of(m for m in store.view().durable.values() if m.active)
    plan = session_route(
        "round the vat",
        ["billing/tax.py"],
        pool,
        role="",
        classes={},
        scores=store.finder.scores(store.view()),
        quote=str,
    )
    order = [e.memory.id for e in plan.entries]
    tiers = [e.tier for e in plan.entries]
    assert order[:3] == ["core", "billing-rule", "rule-vat"]  # the best-scored pathless rule first
    assert tiers[: 2 + SESSION_RULES] == ["core", "rules", *["rules"] * SESSION_RULES]
    assert order[2 + SESSION_RULES] == "tax-fact" and tiers[2 + SESSION_RULES] == "path"
    assert "css-rule" not in order
    assert plan.entries[1].reason == "rules: changed file billing/tax.py matches billing/**"


def test_a_big_class_does_not_take_the_budget_from_the_memory_the_task_names(tmp_path: Path) -> None:
    """A class with many members that share nothing with the task: the memory the task names
    is still a body at the default budget (the whole class came first and took it)."""
    workspace = tmp_path / "ws"
    for n in range(40):
        write_memory(
            workspace,
            f"feature-rule-{n:02d}",
            type="convention",
            title=f"House convention number {n} for shelving",
            body="Warehouse shelving layout convention. " * 30,
            tags=["api"],
        )
    write_memory(
        workspace,
        "krone-currency",
        type="fact",
        title="Supported currencies",
        body="Checkout takes EUR, SEK and NOK (Norwegian krone).",
    )
    result, task_class = Store(workspace).load("add a feature: Norwegian krone in checkout")
    assert task_class == "feature"
    bodies = [row["id"] for row in result.memories if row.get("tier") == "body"]
    assert "krone-currency" in bodies
