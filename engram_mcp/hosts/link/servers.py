"""Under which names a host runs this engram (review L2): `engram`, and every other server whose
command is this installation's `engram-mcp` (say `.mcp.json` `"mem": {"command": "engram-mcp"}`).

The gate audit checks each name's own tool names (`mcp__mem__engram_commit`,
`mem_engram_commit`, `mcp_mem_engram_commit`, `[mcp_servers.mem]`). `engram` is always audited,
linked or not: a rule for it is ready the moment it is linked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram_mcp.hosts.doctor.findings import Where, read_jsonc, read_toml
from engram_mcp.hosts.gate.gate import SERVER
from engram_mcp.hosts.link.launch import is_ours
from engram_mcp.hosts.targets import known_files


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def entry_runs_engram(target: str, entry: Any) -> bool:
    """Whether one server entry of `target`'s config runs this engram."""
    entry = _dict(entry)
    command = entry.get("command")
    if target == "opencode" and isinstance(command, list) and command:
        return is_ours(command[0], command[1:])
    args = entry.get("args")
    return is_ours(command, args if isinstance(args, list) else [])


def _toml(path: Path) -> dict[str, Any]:
    return read_toml(path)


def _containers(where: Where, target: str) -> list[dict[str, Any]]:
    found = []
    for host in known_files(where.workspace, where.env):
        if host.target != target:
            continue
        data: Any = _toml(host.path) if host.format == "toml" else read_jsonc(host.path)
        for key in host.container:
            data = _dict(data).get(key)
        found.append(_dict(data))
    if target == "claude":
        state = _dict(read_jsonc(where.claude_json()))
        found.append(_dict(state.get("mcpServers")))
        projects = _dict(state.get("projects"))
        found += [_dict(_dict(projects.get(key)).get("mcpServers")) for key in where.project_keys()]
    return found


def server_names(where: Where, target: str) -> tuple[str, ...]:
    """`engram`, then every other name under which `target`'s configs run this engram."""
    names = [SERVER]
    for servers in _containers(where, target):
        for name, entry in servers.items():
            if name not in names and entry_runs_engram(target, entry):
                names.append(name)
    return tuple(names)
