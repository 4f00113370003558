"""Small builders for memory files in tmp workspaces (shared by the store tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store.memory import render_memory


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
