"""Golden JSON-lines transcripts, one per era, replayed in-process through the real stdio layer.

Regenerate after an intended change with `ENGRAM_REGOLD=1 make test` and review the diff.
"""

from __future__ import annotations

import io
import os
from datetime import date
from pathlib import Path

import orjson
import pytest

from engram_mcp.mcp.app import server_spec
from engram_mcp.mcp.tools.base import Flags
from protocol.loop import Server
from store.store import Store
from tests.conftest import FIXTURES

TRANSCRIPTS = FIXTURES / "transcripts"


@pytest.mark.parametrize("case", sorted(TRANSCRIPTS.glob("*.in.jsonl")), ids=lambda p: p.name.split(".")[0])
def test_transcript_replays_to_its_golden_reply(case: Path, workspace: Path) -> None:
    """engram's own choice: every reply of a fixed session is pinned byte for byte (as JSON)."""
    store = Store(workspace, read_only=True, today=lambda: date(2026, 11, 29))
    out = io.BytesIO()
    Server(server_spec(store, Flags(read_only=True)), concurrent=False).serve(
        io.BytesIO(case.read_bytes()), out
    )
    golden = case.with_name(case.name.replace(".in.", ".out."))
    if os.environ.get("ENGRAM_REGOLD"):
        golden.write_bytes(out.getvalue())
    got = [orjson.loads(line) for line in out.getvalue().splitlines()]
    want = [orjson.loads(line) for line in golden.read_bytes().splitlines()]
    assert got == want
