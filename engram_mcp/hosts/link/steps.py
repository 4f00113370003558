"""Host-side steps a workspace link still needs, where they can be seen (SPEC §8).

The rest, and why: docs/design.md, `engram_mcp/hosts/link/steps.py`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from engram_mcp.hosts.doctor.findings import Finding, Where, read_jsonc, read_toml
from engram_mcp.hosts.gate.gate import SERVER
from engram_mcp.hosts.targets import codex_home

STEP_PENDING = "host.step_pending"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _claude(where: Where) -> Finding | None:
    state = _dict(read_jsonc(where.claude_json()))
    places = [_dict(_dict(state.get("projects")).get(key)) for key in where.project_keys()]
    # a committed .claude/settings.json is not counted: Claude Code ignores its approval keys
    # in an untrusted folder, so a cloned repository cannot approve its own servers
    places += [
        _dict(read_jsonc(p))
        for p in where.claude_settings()
        if p != where.workspace / ".claude" / "settings.json"
    ]
    if any(SERVER in _names(p.get("disabledMcpjsonServers")) for p in places):
        return Finding(
            STEP_PENDING,
            where.show(where.workspace / ".mcp.json"),
            "Claude Code was told not to start the project server engram (disabledMcpjsonServers)",
            'remove "engram" from disabledMcpjsonServers and approve it in `claude` (/mcp)',
        )
    if any(
        SERVER in _names(p.get("enabledMcpjsonServers")) or p.get("enableAllProjectMcpServers") is True
        for p in places
    ):
        return None
    return Finding(
        STEP_PENDING,
        where.show(where.workspace / ".mcp.json"),
        "Claude Code has not approved the project server engram yet",
        'approve "engram" when `claude` asks at its next start here, '
        'or add "enabledMcpjsonServers": ["engram"] to .claude/settings.local.json',
    )


def _gemini_trusted(where: Where) -> bool:
    if where.env.get("GEMINI_CLI_TRUST_WORKSPACE") in ("true", "false"):
        return where.env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    settings = _dict(read_jsonc(where.home / ".gemini" / "settings.json"))
    if _dict(_dict(settings.get("security")).get("folderTrust")).get("enabled", True) is False:
        return True
    rules = _dict(read_jsonc(_trusted_folders(where)))
    here = where.workspace.resolve()
    best, level = -1, None
    for rule, value in rules.items():
        base = Path(rule).parent if value == "TRUST_PARENT" else Path(rule)
        try:
            inside = here == base.resolve() or here.is_relative_to(base.resolve())
        except OSError:
            continue
        if inside and len(rule) > best:
            best, level = len(rule), value
    return level in ("TRUST_FOLDER", "TRUST_PARENT")


def _trusted_folders(where: Where) -> Path:
    custom = where.env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    return Path(custom) if custom else where.home / ".gemini" / "trustedFolders.json"


def _gemini(where: Where) -> Finding | None:
    if _gemini_trusted(where):
        return None
    file = where.show(_trusted_folders(where))
    return Finding(
        STEP_PENDING,
        file,
        "Gemini CLI ignores .gemini/settings.json until this folder is trusted",
        f'trust the folder when `gemini` asks, or add "{where.workspace}": "TRUST_FOLDER" to {file}',
    )


def codex_trusted(where: Where) -> bool:
    projects = _dict(read_toml(codex_home(where.env) / "config.toml").get("projects"))
    here = where.workspace.resolve()
    for key, project in projects.items():
        folder = Path(key).resolve()
        if (here == folder or here.is_relative_to(folder)) and _dict(project).get("trust_level") == "trusted":
            return True
    return False


def _codex(where: Where) -> Finding | None:
    if codex_trusted(where):
        return None
    file = where.show(codex_home(where.env) / "config.toml")
    return Finding(
        STEP_PENDING,
        file,
        "Codex reads .codex/config.toml only in trusted projects, and this one is not trusted",
        f'trust the project when `codex` asks, or add [projects."{where.workspace}"] trust_level = "trusted" to {file}',
    )


_STEPS = {"claude": _claude, "gemini": _gemini, "codex": _codex}

RESTART: Final = {
    "opencode": "restart opencode so it reads the new config: it then asks before each "
    "engram_commit and before its shell runs engram",
}
"""A host's step after a link that no file shows done: `link` says it on its `next:` line,
doctor never lists it (it would stay pending for ever)."""


def step_for(target: str, workspace: Path, env: Mapping[str, str] = os.environ) -> Finding | None:
    """The step still missing for `target`'s workspace-scope link, or None."""
    check = _STEPS.get(target)
    return check(Where(workspace, env)) if check is not None else None
