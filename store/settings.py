"""Workspace settings engram writes itself: the active role and the rule-variant mode (§4.5–4.6).

They live in `.engram/config.json`; every other key of that file is kept as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from store.config import read_config_file
from store.errors import ConfigError
from store.ids import check_role
from store.writer import write_lock

if TYPE_CHECKING:
    from store.store import Store


def _update(store: Store, key: str, value: Any) -> Any:
    """Set (or with None remove) one top-level key; return the previous value."""
    with write_lock(store, memories=False):
        path = store.project.config_path
        current, problems = read_config_file(path, ".engram/config.json")
        if problems:
            raise ConfigError(problems[0] + "; fix it before changing settings")
        previous = current.get(key)
        if value is None:
            current.pop(key, None)
        else:
            current[key] = value
        store.apply([(path, orjson.dumps(current, option=orjson.OPT_INDENT_2) + b"\n")])
    return previous


def set_role(store: Store, role: str) -> tuple[str, str]:
    """(previous, current) role; `default` resets. The role must be a slug in full."""
    check_role(role)
    previous = store.config().role
    _update(store, "role", None if role == "default" else role)
    return previous, role


def set_rule_variant(store: Store, mode: str, variant: str | None, memory_id: str | None) -> tuple[str, str]:
    """(previous, current) described as `mode[:variant][@id]`."""
    config = store.config()
    setting: dict[str, Any] = dict(config.rule_variant)
    target: dict[str, Any] = {"mode": mode, **({"variant": variant} if variant else {})}
    if memory_id:
        ids = dict(setting.get("ids") or {})
        previous = describe(ids.get(memory_id) or {"mode": setting.get("mode", "base")}, memory_id)
        ids[memory_id] = target
        setting["ids"] = ids
    else:
        previous = describe(setting, None)
        setting = {**target, **({"ids": setting["ids"]} if setting.get("ids") else {})}
    _update(store, "rule_variant", setting)
    return previous, describe(target, memory_id)


def describe(setting: dict[str, Any], memory_id: str | None) -> str:
    text = str(setting.get("mode", "base"))
    if setting.get("variant"):
        text += f":{setting['variant']}"
    return text + (f"@{memory_id}" if memory_id else "")
