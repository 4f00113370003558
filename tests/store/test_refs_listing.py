"""The tracked-file listing behind reference extraction is kept while the repository's index
file is unchanged (no git process per proposal), and a file added to git is seen by the very
next proposal."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.code import refs
from store.files.git import run_git
from store.store import Store
from tests.support.files import write
from tests.support.gitrepo import commit_all, git, init
from tests.support.proposals import candidate, fixed, propose


def _counting_git(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    calls: list[tuple[str, ...]] = []

    def counting(cwd: Path, *args: str, timeout: float = 10.0) -> str | None:
        calls.append(args)
        return run_git(cwd, *args, timeout=timeout)

    monkeypatch.setattr(refs, "run_git", counting)
    return calls


def test_the_listing_is_kept_until_the_index_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = init(tmp_path / "code")
    write(root / "app" / "billing.py", "def charge():\n    pass\n")
    commit_all(root, "seed")
    calls = _counting_git(monkeypatch)
    assert refs.tracked_files(root) == ["app/billing.py"]
    assert refs.tracked_files(root) == ["app/billing.py"]
    assert len(calls) == 1
    write(root / "app" / "tax.py", "def levy():\n    pass\n")
    assert refs.tracked_files(root) == ["app/billing.py"]  # on disk, not in the index: same listing
    git(root, "add", "app/tax.py")
    assert refs.tracked_files(root) == ["app/billing.py", "app/tax.py"]
    assert len(calls) == 2
    git(root, "rm", "-q", "--cached", "app/billing.py")
    assert refs.tracked_files(root) == ["app/tax.py"]
    listed = refs.tracked_files(root)
    assert listed is not None
    listed.append("changed by a caller")
    assert refs.tracked_files(root) == ["app/tax.py"]


def test_no_repository_is_never_kept(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    write(plain / "later.py", "def load_later():\n    pass\n")
    assert refs.tracked_files(plain) is None
    assert refs.listing(plain) == (["later.py"], False)


def test_a_file_added_to_git_is_cited_by_the_next_proposal(tmp_path: Path, engram_home: Path) -> None:
    root = init(tmp_path / "ws")
    write(root / "app" / "billing.py", "def charge():\n    pass\n")
    commit_all(root, "seed")
    (root / ".engram" / "memory").mkdir(parents=True)
    store = Store(root, clock=fixed())
    first = propose(store, [candidate("Levies run nightly", "The levy job runs in app/tax.py at night.")])
    assert first.candidates[0].refs == ()
    write(root / "app" / "tax.py", "def levy():\n    pass\n")
    git(root, "add", "app/tax.py")
    second = propose(store, [candidate("Levies run at night", "The levy job runs in app/tax.py after dark.")])
    assert second.candidates[0].refs == ("app/tax.py",)
