"""Acceptance: `engram doctor` and `engram upgrade` (SPEC §8) on realistic host configs."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run, run_json
from tests.support.files import write
from tests.support.host_configs import assert_our_command, parse_jsonc
from tests.support.paths import ENGRAM_MCP

MARKER = "# managed by engram: `engram unlink codex` removes this block"


def codes(envelope: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["code"], f["file"]) for f in envelope["data"]["findings"]]


# --- doctor ------------------------------------------------------------------------------------
def test_doctor_flags_gemini_trust_with_the_file_and_the_fix(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        private_home / ".gemini" / "settings.json",
        f'{{\n  // mine\n  "mcpServers": {{\n    "engram": {{"command": {json.dumps(str(ENGRAM_MCP))}, "args": [], "trust": true}}\n  }}\n}}\n',
    )
    rc, out, err = run(capsys, "doctor")
    assert rc == 1
    [line] = [line for line in (out + err).splitlines() if "host.gate_open" in line]
    assert "~/.gemini/settings.json" in line
    assert "Fix:" in line and '"trust": true' in line.split("Fix:")[1]
    rc, env = run_json(capsys, "doctor")
    assert rc == 1
    [finding] = [f for f in env["data"]["findings"] if f["code"] == "host.gate_open"]
    assert finding["file"] == "~/.gemini/settings.json" and "trust" in finding["fix"]


def test_doctor_is_clean_on_a_freshly_linked_setup(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (
        ["claude"],
        ["codex", "--global"],
        ["codex"],
        ["gemini"],
        ["gemini", "--global"],
        ["cursor", "--global"],
        ["opencode"],
        ["vscode"],
        ["windsurf", "--global"],
        ["antigravity", "--global"],
        ["claude-desktop", "--global"],
    ):
        rc, out, err = run(capsys, "link", *argv)
        assert rc == 0, out + err
    rc, out, err = run(capsys, "doctor")
    assert rc == 0, out + err
    assert "OK" in out
    rc, env = run_json(capsys, "doctor")
    assert rc == 0 and env["data"]["findings"] == []
    assert len(env["data"]["linked"]) == 11
    # the hosts' own steps are listed, and do not fail doctor; the shell rules link wrote
    # leave no host whose shell runs engram's writes unasked (issue 19); opencode still runs
    # every other bash command unasked, which doctor says (host.shell_open, informational)
    host_steps = [s for s in env["data"]["steps"] if s["code"].startswith("host.")]
    assert sorted(s["file"].removeprefix("./") for s in host_steps) == [
        ".mcp.json",
        "cursor",  # host.shell_unasked: the editors' agent terminals, seen by their markers only
        "opencode.json",
        "windsurf",
        "~/.codex/config.toml",
        "~/.gemini/trustedFolders.json",
    ]
    assert [s["code"] for s in env["data"]["steps"] if s["file"] == "./opencode.json"] == ["host.shell_open"]


def test_doctor_flags_a_missing_command(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        private_home / ".cursor" / "mcp.json",
        '{"mcpServers": {"engram": {"command": "/opt/gone/venv/bin/engram-mcp", "args": []}}}\n',
    )
    rc, env = run_json(capsys, "doctor")
    assert rc == 1
    assert ("host.command_missing", "~/.cursor/mcp.json") in codes(env)
    [finding] = [f for f in env["data"]["findings"] if f["code"] == "host.command_missing"]
    assert "upgrade" in finding["fix"] or "link" in finding["fix"]


def test_doctor_flags_a_foreign_entry(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(ws / ".mcp.json", '{"mcpServers": {"engram": {"command": "uvx", "args": ["engram-mcp"]}}}\n')
    write(
        private_home / ".codex" / "config.toml",
        '[mcp_servers.engram]\ncommand = "npx"\nargs = ["-y", "other-engram"]\n',
    )
    rc, env = run_json(capsys, "doctor")
    assert rc == 1
    found = codes(env)
    assert ("host.foreign", ".mcp.json") in [(c, f.removeprefix("./")) for c, f in found]
    assert ("host.foreign", "~/.codex/config.toml") in found


def test_doctor_flags_a_claude_entry_without_hook_or_always_load(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        ws / ".mcp.json",
        f'{{"mcpServers": {{"engram": {{"command": {json.dumps(str(ENGRAM_MCP))}}}}}}}\n',
    )
    rc, env = run_json(capsys, "doctor")
    assert rc == 1
    assert any(code == "host.hook_missing" for code, _ in codes(env))


# --- upgrade -----------------------------------------------------------------------------------
def test_upgrade_repins_old_entries_of_ours_and_leaves_the_rest_alone(
    ws: Path,
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    old = tmp_path / "old-venv" / "bin" / "engram-mcp"
    write(
        old,
        "#!/opt/old-venv/bin/python3\nimport sys\nfrom engram_mcp.mcp.server import main\nsys.exit(main())\n",
    )
    old.chmod(0o755)
    other_server = '"time": {"command": "/opt/tools/bin/mcp-time", "args": ["--tz", "UTC"]}'
    cursor = write(
        private_home / ".cursor" / "mcp.json",
        f'{{\n  // user servers\n  "mcpServers": {{\n    {other_server},\n    "engram": {{"command": {json.dumps(str(old))}, "args": [], '
        '"env": {"ENGRAM_LOG": "debug"}},\n  },\n}\n',
    )
    vscode = write(
        ws / ".vscode" / "mcp.json",
        f'{{\n    "servers": {{\n        "engram": {{"type": "stdio", "command": {json.dumps(str(old))}, "args": []}},\n'
        '        "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}\n    }\n}\n',
    )
    codex_text = (
        '# codex\nmodel = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n\n'
        f"{MARKER}\n[mcp_servers.engram]\ncommand = {json.dumps(str(old))}\nargs = []\n\n"
        '[mcp_servers.engram.tools.engram_commit]\napproval_mode = "approve"\n'
    )
    codex = write(private_home / ".codex" / "config.toml", codex_text)
    untouched = write(
        private_home / ".gemini" / "settings.json",
        '{{"mcpServers": {{"helper": {{"command": {}}}}}}}\n'.format(
            json.dumps(str(old.with_name("helper")))
        ),
    ).read_bytes()

    rc, env = run_json(capsys, "doctor")
    stale = {f for c, f in codes(env) if c == "host.pin_stale"}
    assert {"~/.cursor/mcp.json", "~/.codex/config.toml"} <= stale
    # a committed file naming a path is first of all not portable (issue 22)
    assert ("host.not_portable", "./.vscode/mcp.json") in codes(env)
    assert ("host.gate_open", "~/.codex/config.toml") in codes(env)

    rc, out, err = run(capsys, "upgrade")
    assert rc == 0, out + err

    cursor_text = cursor.read_text()
    cursor_data = parse_jsonc(cursor_text)["mcpServers"]
    assert_our_command(cursor_data["engram"]["command"])
    assert cursor_data["engram"]["command"] != str(old)
    assert cursor_data["engram"]["env"] == {"ENGRAM_LOG": "debug"}
    assert other_server in cursor_text and "// user servers" in cursor_text
    vscode_data = parse_jsonc(vscode.read_text())["servers"]
    assert vscode_data["engram"]["command"] == "engram-mcp", "upgrade writes the bare name in the project"
    assert vscode_data["engram"]["type"] == "stdio"
    assert vscode_data["fetch"] == {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}
    assert '"fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}' in vscode.read_text()
    codex_after = codex.read_text()
    codex_data = tomllib.loads(codex_after)["mcp_servers"]
    assert_our_command(codex_data["engram"]["command"])
    # issue 9: an old block's "approve" (approved without asking) is re-written as "prompt"
    assert codex_data["engram"]["tools"]["engram_commit"]["approval_mode"] == "prompt"
    assert codex_after.startswith(
        '# codex\nmodel = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n\n' + MARKER
    )
    assert (private_home / ".gemini" / "settings.json").read_bytes() == untouched
    assert old.exists()

    rc, env = run_json(capsys, "doctor")
    assert rc == 0, env
    rc, env = run_json(capsys, "upgrade")
    assert rc == 0 and set(r["action"] for r in env["data"]["results"]) == {"unchanged"}
