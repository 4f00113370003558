"""A cloned repository runs no program through engram's git calls (issue 19, item 1).

The clone holds, in a sub-project folder that also holds `.engram/`, the plain files of a git
repository (`HEAD`, `config`, `objects/`, `refs/`) whose config names a program for every hook
point a read can reach: signature checks in `git log`, fsmonitor, a clean filter and a textconv
driver for the working tree (`core.worktree` pointing at the folder). engram's reads (search,
load, the session hook, verify, history, stale) are run there as a user would; the planted
program must never run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from store.files.git import repository, run_git
from tests.support.gitrepo import ENV, commit_all, git, init
from tests.support.paths import ENGRAM

MEMORY = """---
title: Rounding lives in the billing module
id: rounding-lives-in-billing
type: fact
scope: project
status: active
refs: ["app.py", "lib/**/*.py"]
created: "2026-01-01T00:00:00Z"
updated: "2026-01-01T00:00:00Z"
---
Rounding lives in `app.py` (round_cents).
"""


def _git_in(bare: Path, args: list[str], data: bytes) -> str:
    return (
        subprocess.run(
            ["git", *args],
            input=data,
            capture_output=True,
            env={**os.environ, **ENV, "GIT_DIR": str(bare)},
            check=True,
        )
        .stdout.decode()
        .strip()
    )


def _plant_repository(folder: Path, program: Path) -> None:
    """The plain files of a git repository in `folder`, with a commit that carries a signature
    header and touches `app.py`, and a config that names `program` wherever git runs one."""
    bare = folder.parent / "planted.git"
    git(folder.parent, "init", "-q", "--bare", str(bare))
    blob = _git_in(bare, ["hash-object", "-w", "--stdin"], b"def round_cents(x):\n    return x\n")
    tree = _git_in(bare, ["mktree"], f"100644 blob {blob}\tapp.py\n".encode())
    signed = (
        f"tree {tree}\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    commit = _git_in(bare, ["hash-object", "-t", "commit", "-w", "--stdin"], signed.encode())
    (bare / "refs" / "heads" / "main").write_text(commit + "\n")
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    for entry in bare.iterdir():
        entry.rename(folder / entry.name)
    bare.rmdir()
    (folder / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f"\tfsmonitor = {program}\n\thooksPath = hooks\n"
        f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {program}\n"
        f'[filter "x"]\n\tclean = {program}\n\tsmudge = {program}\n\tprocess = {program}\n'
        f'[diff "x"]\n\ttextconv = {program}\n\tcommand = {program}\n'
        f"[diff]\n\texternal = {program}\n"
    )
    (folder / ".gitattributes").write_text("* filter=x diff=x\n")


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, Path]:
    """(the sub-project folder holding .engram/ and the planted repository, the marker file)."""
    marker = tmp_path / "ran"
    outer = init(tmp_path / "clone")
    sub = outer / "service"
    (sub / ".engram" / "memory").mkdir(parents=True)
    (sub / ".engram" / "memory" / "rounding-lives-in-billing.md").write_text(MEMORY)
    (sub / "app.py").write_text("def round_cents(x):\n    return x\n")
    (sub / "lib").mkdir()
    (sub / "lib" / "money.py").write_text("X = 1\n")
    program = sub / "pwn.sh"
    program.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    program.chmod(0o755)
    _plant_repository(sub, program)
    commit_all(outer, "a project with a planted repository")
    (sub / "app.py").write_text("def round_cents(x):\n    return round(x)\n")  # a local edit
    return sub, marker


def _engram(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ENGRAM_WORKSPACE"}
    env["ENGRAM_SESSION_OBJECTIVE"] = "rounding in billing"
    return subprocess.run(
        [ENGRAM, *args], cwd=cwd, capture_output=True, text=True, env=env, input="", timeout=60
    )


@pytest.mark.parametrize(
    "args",
    [
        ("search", "rounding"),
        ("load", "rounding in billing"),
        ("load",),
        ("hook", "session-start"),
        ("verify",),
        ("history", "rounding-lives-in-billing"),
        ("stale",),
        ("show", "rounding-lives-in-billing"),
        ("status",),
    ],
)
def test_no_read_runs_the_planted_program(clone: tuple[Path, Path], args: tuple[str, ...]) -> None:
    sub, marker = clone
    done = _engram(sub, *args)
    assert done.returncode in (0, 1), done.stderr
    assert not marker.exists(), f"engram {' '.join(args)} ran the clone's program"


def test_the_planted_repository_would_run_it_if_git_discovered_it(clone: tuple[Path, Path]) -> None:
    """The attack is real: plain git in that folder runs the program (so the test above can fail)."""
    sub, marker = clone
    subprocess.run(
        ["git", "log", "-1"], cwd=sub, capture_output=True, env={**os.environ, **ENV}, timeout=30, check=False
    )
    assert marker.exists()


def test_git_is_asked_about_the_repository_engram_found(clone: tuple[Path, Path]) -> None:
    sub, _ = clone
    assert repository(sub) == (sub.parent / ".git", sub.parent)
    top = run_git(sub, "rev-parse", "--show-toplevel")
    assert top is not None and Path(top.strip()) == sub.parent
    listed = (run_git(sub, "ls-files") or "").splitlines()
    assert {"HEAD", "config", ".engram/memory/rounding-lives-in-billing.md"} <= set(listed)


def test_no_repository_means_no_git_at_all(tmp_path: Path) -> None:
    lone = tmp_path / "lone"
    lone.mkdir()
    for name in ("HEAD", "config"):
        (lone / name).write_text("ref: refs/heads/main\n" if name == "HEAD" else "[core]\n\tbare = true\n")
    (lone / "objects").mkdir()
    (lone / "refs").mkdir()
    assert repository(lone) is None or repository(lone) == repository(tmp_path)
    if repository(tmp_path) is None:
        assert run_git(lone, "rev-parse", "--git-dir") is None


def test_the_environment_cannot_point_git_elsewhere(
    clone: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    sub, marker = clone
    monkeypatch.setenv("GIT_DIR", str(sub))
    monkeypatch.setenv("GIT_WORK_TREE", str(sub))
    out = run_git(sub, "log", "-1", "--format=%s")
    assert out is not None and out.strip() == "a project with a planted repository"
    assert not marker.exists()


def test_a_hostile_git_config_of_the_repository_itself_runs_nothing(tmp_path: Path) -> None:
    """The second belt, for a `.git/config` that is itself hostile (a repository received as an
    archive): a promisor remote's `uploadpack` on a missing blob, and a clean filter that
    `.gitattributes` names for every file (verify compared memory files through `git diff`)."""
    marker = tmp_path / "ran"
    program = tmp_path / "pwn.sh"
    program.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    program.chmod(0o755)
    root = init(tmp_path / "archive")
    (root / ".engram" / "memory").mkdir(parents=True)
    (root / ".engram" / "memory" / "rounding-lives-in-billing.md").write_text(MEMORY)
    (root / "app.py").write_text("def round_cents(x):\n    return x\n")
    (root / ".gitattributes").write_text("* filter=x\n")
    commit_all(root, "one")
    (root / "app.py").write_text("def round_cents(x):\n    return round(x)\n")
    commit_all(root, "two")
    for line in git(root, "rev-list", "--objects", "--all").splitlines():
        sha, _, name = line.partition(" ")
        if name == "app.py":
            (root / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    for key, value in {
        "core.repositoryformatversion": "1",
        "extensions.partialClone": "origin",
        "remote.origin.promisor": "true",
        "remote.origin.url": f"file://{tmp_path}/nowhere",
        "protocol.file.allow": "always",
        "remote.origin.uploadpack": str(program),
        "filter.x.clean": str(program),
    }.items():
        git(root, "config", key, value)
    os.utime(root / ".engram" / "memory" / "rounding-lives-in-billing.md", (1, 1))
    for args in (
        ("search", "rounding"),
        ("load", "rounding"),
        ("stale",),
        ("verify",),
        ("hook", "session-start"),
    ):
        _engram(root, *args)
        assert not marker.exists(), f"engram {' '.join(args)} ran the repository's program"
