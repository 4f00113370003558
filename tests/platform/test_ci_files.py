"""The Makefile and the macOS/Windows workflow (issue 22, Build 6): `make` names the venv's
programs where each platform puts them, without changing what Linux runs, and the workflow
runs `make test` on both runners and both Pythons."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _dry_run(target: str, **variables: str) -> list[str]:
    # not OS (the test sets it), nor what an outer make (`make test` itself) passes down
    outer = ("OS", "MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")
    env = {k: v for k, v in os.environ.items() if k not in outer}
    env.update(variables)
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", target],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None or os.name == "nt", reason="needs make, on POSIX")
def test_make_runs_bin_python_on_posix_and_scripts_python_exe_on_windows() -> None:
    """What `make test` and `make lint` run: .venv/bin/... as always on Linux and macOS;
    .venv/Scripts/*.exe where the environment says OS=Windows_NT, with `python` for the venv."""
    assert (
        _dry_run("test")[-1]
        == "PYTHONDONTWRITEBYTECODE= .venv/bin/python -m pytest -q -n auto --maxprocesses 4"
    )
    assert _dry_run("test")[0] == "test -x .venv/bin/python || python3 -m venv .venv"
    assert _dry_run("lint")[-3:] == [
        ".venv/bin/ruff check .",
        ".venv/bin/ruff format --check .",
        ".venv/bin/mypy",
    ]
    windows = _dry_run("test", OS="Windows_NT", PYTHON="python")
    assert windows[0] == "test -x .venv/Scripts/python.exe || python -m venv .venv"
    assert (
        windows[-1]
        == "PYTHONDONTWRITEBYTECODE= .venv/Scripts/python.exe -m pytest -q -n auto --maxprocesses 4"
    )
    assert _dry_run("lint", OS="Windows_NT")[-1] == ".venv/Scripts/mypy.exe"


def test_the_platforms_workflow_runs_make_test_on_macos_and_windows() -> None:
    """Both runners, Python 3.11 and 3.13, bash (Git Bash on Windows), line endings as
    committed, no secrets, and `make test` as the one thing it runs."""
    text = (ROOT / ".github" / "workflows" / "platforms.yml").read_text("utf-8")
    flow = yaml.safe_load(text)
    job = flow["jobs"]["test"]
    assert job["strategy"]["matrix"] == {"os": ["macos-latest", "windows-latest"], "python": ["3.11", "3.13"]}
    assert job["strategy"]["fail-fast"] is False
    assert job["defaults"]["run"]["shell"] == "bash"
    assert flow["permissions"] == {"contents": "read"}
    runs = [step.get("run", "") for step in job["steps"]]
    assert runs[0] == "git config --global core.autocrlf false"
    assert "make test PYTHON=python" in runs[-1] and runs[-1].rstrip().endswith("else make test; fi")
    assert "secrets." not in text
