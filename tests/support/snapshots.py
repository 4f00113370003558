"""Byte snapshots of a store or of a folder tree, to prove that a refused or failed operation
wrote nothing (or exactly what it should)."""

from __future__ import annotations

from pathlib import Path


def memory_state(ws: Path, home: Path) -> dict[str, bytes]:
    """Every memory and note file of both scopes, and the pending proposals, by path."""
    out: dict[str, bytes] = {}
    for root in (ws / ".engram", home):
        for folder in ("memory", "working"):
            for p in sorted((root / folder).glob("*.md")):
                out[str(p)] = p.read_bytes()
    pending = ws / ".engram" / "pending-approvals.json"
    if pending.exists():
        out[str(pending)] = pending.read_bytes()
    return out


def memory_files(ws: Path) -> dict[str, bytes]:
    """The workspace's memory files alone, by file name."""
    return {p.name: p.read_bytes() for p in sorted((ws / ".engram" / "memory").glob("*.md"))}


def tree_state(*roots: Path, dirs: bool = True) -> dict[str, bytes]:
    """Every file (and folder, unless dirs=False) under roots, path → bytes; engram's own store
    folders are left out."""
    files: dict[str, bytes] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root.parent).as_posix()
            if "/.engram" in "/" + rel or "/.config/engram" in "/" + rel:
                continue
            if path.is_file():
                files[rel] = path.read_bytes()
            elif dirs and path.is_dir():
                files[rel + "/"] = b""
    return files
