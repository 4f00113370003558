"""Acceptance: with no session objective, `engram hook session-start` routes by the git branch
and the last commit subjects (issue 12: "The hook loads nothing"; SPEC §10)."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import pytest

from engram_mcp.hook import git_objective, session_start
from store.store import Store
from tests.support.store_helpers import write_memory

PROOF = re.compile(r"^engram: loaded (\d+) memories \((\d+) tokens\) index ([0-9a-f]{12})$")
COMMITS = (
    "Add line-level VAT to the invoice totals",
    "Round each invoice line half-even before summing",
    "Test totals for a three-line invoice in EUR",
)


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository on branch fix/invoice-rounding with a few commits and an engram store:
    one core memory, two that the branch and commits route to, and unrelated ones."""
    repo = tmp_path / "billing"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "Initial commit")
    git(repo, "checkout", "-q", "-b", "fix/invoice-rounding")
    for subject in COMMITS:
        git(repo, "commit", "-q", "--allow-empty", "-m", subject)
    Store(repo).init()
    write_memory(
        repo,
        "review-every-migration",
        title="Every migration gets a second reviewer",
        type="rule",
        always=True,
    )
    write_memory(
        repo,
        "round-half-even-in-billing",
        title="Round invoice amounts half-even",
        type="rule",
        body="Billing rounds every invoice line half-even (banker's rounding); finance reconciles on it.\n",
        tags=["billing"],
    )
    write_memory(
        repo,
        "vat-is-per-line",
        title="VAT is computed per invoice line",
        type="decision",
        body="We compute VAT per line, then sum; never on the invoice total.\n",
    )
    for n, topic in enumerate(
        ("kubernetes ingress timeouts", "frontend storybook themes", "mobile push tokens")
    ):
        write_memory(repo, f"unrelated-{n}", title=f"Notes on {topic}", body=f"All about {topic}.\n")
    return repo


def test_the_objective_comes_from_the_branch_and_the_last_commits(repo: Path) -> None:
    task, source = git_objective(repo)
    assert task.startswith("fix invoice rounding; ")
    for subject in COMMITS:
        assert subject in task
    assert source == "branch fix/invoice-rounding, 4 recent commit subject(s)"


def test_session_start_prints_the_core_tier_first_then_memories_routed_by_git(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    out = io.StringIO()
    assert session_start(None, stdin=io.StringIO(""), out=out) == 0
    text = out.getvalue()
    lines = text.rstrip("\n").splitlines()
    assert PROOF.match(lines[-1]), lines[-1]
    assert int(PROOF.match(lines[-1]).group(1)) >= 3  # type: ignore[union-attr]
    assert (
        lines[-2]
        == "engram: no session objective set; routed by git (branch fix/invoice-rounding, 4 recent commit subject(s))"
    )
    core = text.index("review-every-migration")
    assert core < text.index("round-half-even-in-billing") and core < text.index("vat-is-per-line")
    assert "unrelated-" not in text


def test_a_set_objective_still_wins_over_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    monkeypatch.setenv("ENGRAM_SESSION_OBJECTIVE", "kubernetes ingress timeouts")
    out = io.StringIO()
    assert session_start(None, stdin=io.StringIO(""), out=out) == 0
    assert "routed by git" not in out.getvalue() and "unrelated-0" in out.getvalue()


def test_outside_a_git_repository_the_hook_routes_by_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    Store(plain).init()
    assert git_objective(plain) == ("", "")
    monkeypatch.chdir(plain)
    out = io.StringIO()
    assert session_start(None, stdin=io.StringIO(""), out=out) == 0
    assert "routed by git" not in out.getvalue() and PROOF.match(out.getvalue().splitlines()[-1])
