"""Rule variants (SPEC §4.6): which wording of a rule load shows, and why."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from store.files.memory import Memory


def variant_text(memory: Memory, setting: Mapping[str, Any], objective: str) -> tuple[str | None, str]:
    """(text to show instead of the body or None, explanation or '') for this memory."""
    if not memory.has_variants:
        return None, ""
    per_id = setting.get("ids") or {}
    if isinstance(per_id, dict) and isinstance(per_id.get(memory.id), dict):
        setting = per_id[memory.id]
    mode = setting.get("mode", "base")
    variants = memory.variants
    if mode == "base" or not variants:
        return None, ""
    if mode == "fixed":
        name = str(setting.get("variant") or "")
        if name in variants:
            return variants[name], f"variant {name} (fixed)"
        return None, f"variant {name!r} missing, body used"
    names = sorted(variants)
    seed = hashlib.sha256(f"{objective}\n{memory.id}".encode()).digest()[0]
    choice = (["base", *names])[seed % (len(names) + 1)]
    if choice == "base":
        return None, "variant base (rotate)"
    return variants[choice], f"variant {choice} (rotate)"
