"""Files a test plants: one written where it is needed, its folders made."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> Path:
    """`text` at `path` (UTF-8), its parent folders made; `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path
