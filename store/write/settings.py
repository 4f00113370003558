"""Workspace settings engram writes itself: the active role and the rule-variant mode (§4.5–4.6).

They live in `.engram/config.json`; every other key of that file is kept as it is. Each change
is a read-modify-write under the workspace lock: the settings it starts from are read from the
files after the lock is taken (never from a cache filled before), so two concurrent changes
both land (a `rule_variant` computed from config read before the lock lost one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from store.config import Config, load_config, read_config_file
from store.errors import ConfigError
from store.files.ids import check_role
from store.write.transaction import apply, write_lock

if TYPE_CHECKING:
    from store.store import Store

Change = Callable[[Config], tuple[Any, Any]]
"""From the settings in force (read under the lock): (the key's new value or None to remove it,
what the caller reports)."""


def _update(store: Store, key: str, change: Change) -> Any:
    """Set (or with None remove) one top-level key of `.engram/config.json`, computed by `change`
    from the settings read under the lock; return what `change` reports."""
    with write_lock(store, memories=False):
        path = store.project.config_path
        current, problems = read_config_file(path, ".engram/config.json", base=store.workspace)
        if problems:
            raise ConfigError(problems[0] + "; fix it before changing settings")
        value, report = change(load_config(store.user.config_path, path))
        if value is None:
            current.pop(key, None)
        else:
            current[key] = value
        apply(store, [(path, orjson.dumps(current, option=orjson.OPT_INDENT_2) + b"\n")])
    return report


def set_role(store: Store, role: str) -> tuple[str, str]:
    """(previous, current) role; `default` resets. The role must be a slug in full."""
    check_role(role)

    def change(config: Config) -> tuple[Any, Any]:
        return (None if role == "default" else role), (config.role, role)

    previous, current = _update(store, "role", change)
    return str(previous), str(current)


def set_rule_variant(store: Store, mode: str, variant: str | None, memory_id: str | None) -> tuple[str, str]:
    """(previous, current) described as `mode[:variant][@id]`."""
    target: dict[str, Any] = {"mode": mode, **({"variant": variant} if variant else {})}

    def change(config: Config) -> tuple[Any, Any]:
        setting: dict[str, Any] = dict(config.rule_variant)
        if memory_id:
            ids = dict(setting.get("ids") or {})
            previous = describe(ids.get(memory_id) or {"mode": setting.get("mode", "base")}, memory_id)
            ids[memory_id] = target
            setting["ids"] = ids
        else:
            previous = describe(setting, None)
            setting = {**target, **({"ids": setting["ids"]} if setting.get("ids") else {})}
        return setting, previous

    previous = _update(store, "rule_variant", change)
    return str(previous), describe(target, memory_id)


def describe(setting: dict[str, Any], memory_id: str | None) -> str:
    text = str(setting.get("mode", "base"))
    if setting.get("variant"):
        text += f":{setting['variant']}"
    return text + (f"@{memory_id}" if memory_id else "")
