"""The README's fixture demo (issue 22): run in a clone of this repository, exactly as the
Quick start says, it leaves `git status` clean: everything it makes (the user scope's secret and
checked-config record, derived indexes, locks) is ignored by the repository's .gitignore."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENGRAM = str(Path(sys.executable).with_name("engram"))

DEMO = (
    ["search", "database migration"],
    ["load", "fix the flaky invoice export test", "--explain"],
)


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def test_the_fixture_demo_leaves_the_clone_clean(tmp_path: Path, private_home: Path) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copy(REPO / ".gitignore", clone / ".gitignore")
    shutil.copytree(REPO / "fixtures", clone / "fixtures", ignore=shutil.ignore_patterns(*_ignored()))
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "clone")
    assert _git(clone, "status", "--porcelain") == ""
    env = {**os.environ, "ENGRAM_HOME": "../home"}
    for words in DEMO:
        done = subprocess.run(
            [ENGRAM, *words], cwd=clone / "fixtures" / "workspace", env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    assert (clone / "fixtures" / "home" / "secret").is_file()  # the demo did make its files
    assert _git(clone, "status", "--porcelain", "--untracked-files=all") == ""


def _ignored() -> list[str]:
    """What a fresh clone would not have: the files this checkout's own runs left in fixtures/."""
    listed = _git(REPO, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "fixtures")
    return [Path(line.rstrip("/")).name for line in listed.splitlines() if line]


@pytest.fixture(autouse=True)
def _no_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_VECTORS", "0")
