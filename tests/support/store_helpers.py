"""Small builders for memory files in tmp workspaces, and a lock held by another process
(shared by the store tests and the concurrency suites)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson

from store.files.memory import render_memory
from store.read.columns import Columns
from store.read.index_file import Records
from tests.support.paths import REPO

HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from store.files.lock import workspace_lock

    with workspace_lock(Path(sys.argv[1]), timeout=30):
        print("held", flush=True)
        sys.stdin.read()  # hold until stdin closes (or a SIGKILL)
    """
)


def write_memory(
    root: Path,
    memory_id: str,
    *,
    title: str,
    body: str = "Body text.\n",
    tier: str = "memory",
    **meta: Any,
) -> Path:
    """Write `<root>/.engram/<tier>/<id>.md` with a valid front matter and return its path."""
    front: dict[str, Any] = {"id": memory_id, "type": "note" if tier == "working" else "fact", "title": title}
    front.update(meta)
    path = root / ".engram" / tier / f"{memory_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(render_memory(front, body))
    return path


def ask_elsewhere(lock_path: Path) -> subprocess.Popen[str]:
    """Another process that asks for the workspace lock at `lock_path` (it prints "held" once it
    has it) and holds it until `let_go`."""
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_path)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def hold_elsewhere(lock_path: Path) -> subprocess.Popen[str]:
    """Another process that holds the workspace lock at `lock_path` until `let_go`."""
    proc = ask_elsewhere(lock_path)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def let_go(proc: subprocess.Popen[str]) -> int:
    """Close the holder's stdin (it releases the lock and exits), reap it; its exit code."""
    if proc.poll() is None and proc.stdin is not None:
        proc.stdin.close()
    code = proc.wait(timeout=10)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
    return code


def index_records(path: Path) -> Records:
    """The records of an index.json as a catalog reads them (its tag not checked)."""
    data = orjson.loads(path.read_bytes())
    rows = Columns.parse(data["rows"])
    raw: dict[str, Any] = dict(zip(rows.key, range(len(rows)), strict=True))
    raw.update(data["memories"])
    return Records(raw, rows)


def count_listings(monkeypatch: Any) -> list[Path]:
    """The folders catalogs list from now on (store.read.catalog's `scan`), in order."""
    from store.read import catalog

    listed: list[Path] = []
    real = catalog.scan

    def counting(scope: Any, folder: Path, *args: Any, **kwargs: Any) -> Any:
        listed.append(folder)
        return real(scope, folder, *args, **kwargs)

    monkeypatch.setattr(catalog, "scan", counting)
    return listed
