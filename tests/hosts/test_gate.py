"""Acceptance: every host asks before `engram_commit` (issue 9, SPEC §4.2 last bullet, §8).

What `engram link` writes is inspected with independent parsers (tomllib, a JSONC reader) and
with each host's own matching rules; `engram doctor` is checked against settings that open the
gate in each host. HOME is a temp dir (conftest).
"""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.hosts.edits import backup_path
from engram_mcp.hosts.gate.gate import COMMIT_TOOL, READ_TOOLS
from engram_mcp.hosts.link.slash_commands import MARK
from engram_mcp.mcp.tools import WRITE_TOOLS, build_tools
from engram_mcp.mcp.tools.base import Flags
from store.store import Store
from tests.support.cli import run, run_json
from tests.support.files import write
from tests.support.host_configs import (
    CASES,
    COMMAND,
    Case,
    case_named,
    front_matter,
    gate_open,
    one_open_gate,
    parse_jsonc,
    place,
    place_setting,
)
from tests.support.host_rules import (
    gemini_allowed,
    gemini_policy,
    gemini_policy_decision,
    opencode_bash_decision,
    opencode_decision,
)
from tests.support.paths import ENGRAM_MCP
from tests.support.snapshots import tree_state

GEMINI_COMMIT = "mcp_engram_engram_commit"
OPENCODE_COMMIT = "engram_engram_commit"


# --- the read-tool list ----------------------------------------------------------------------------
def test_the_read_tools_are_exactly_the_tools_that_are_not_write_tools(workspace: Path) -> None:
    """engram's own choice: one list of tools that may run unasked; never the commit tool."""
    store = Store(workspace)
    try:
        names = {tool.name for tool in build_tools(store, Flags())}
    finally:
        store.close()
    assert set(READ_TOOLS) == names - WRITE_TOOLS
    assert COMMIT_TOOL not in READ_TOOLS


# --- Codex -------------------------------------------------------------------------------------------
CODEX_WS = case_named("codex-ws")


@pytest.mark.parametrize("case", [case_named("codex-global"), CODEX_WS], ids=lambda c: c.id)
def test_codex_commit_prompts_and_the_read_tools_are_approved(
    case: Case,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 9: in Codex "approve" means approved without asking; the commit tool gets "prompt"."""
    path, original = place(case, ws, private_home)
    rc, env = run_json(capsys, "link", *case.argv())
    assert rc == 0, env
    assert env["data"]["results"][0]["action"] == "added"
    entry = tomllib.loads(path.read_text())["mcp_servers"]["engram"]
    tools = entry["tools"]
    assert tools[COMMIT_TOOL] == {"approval_mode": "prompt"}
    assert {name for name, t in tools.items() if t.get("approval_mode") == "approve"} == set(READ_TOOLS)
    assert entry.get("default_tools_approval_mode", "prompt") == "prompt"
    rc, env = run_json(capsys, "unlink", *case.argv())
    assert rc == 0
    assert path.read_bytes() == original


def test_codex_workspace_link_says_the_project_must_be_trusted(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SPEC §8: Codex reads .codex/config.toml only in trusted projects; link says so, exactly."""
    rc, out, _ = run(capsys, "link", "codex")
    assert rc == 0
    assert (ws / ".codex" / "config.toml").is_file()
    [step] = [line for line in out.splitlines() if "trust" in line.lower()]
    assert f'[projects."{ws}"]' in step and 'trust_level = "trusted"' in step
    assert "~/.codex/config.toml" in step
    # once trusted, nothing is left to do
    write(private_home / ".codex" / "config.toml", f'[projects."{ws}"]\ntrust_level = "trusted"\n')
    rc, out, _ = run(capsys, "link", "codex")
    assert rc == 0 and "trust_level" not in out


def test_doctor_accepts_the_prompt_mode_and_flags_approve_and_auto(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 9: doctor reported the safe "prompt" as a problem; approve/auto (and no setting) open the gate."""
    rc, _, _ = run(capsys, "link", "codex", "--global")
    assert rc == 0
    rc, env = run_json(capsys, "doctor")
    assert rc == 0, env
    assert env["data"]["findings"] == []
    config = private_home / ".codex" / "config.toml"
    linked = config.read_text()
    command = json.dumps(str(ENGRAM_MCP))
    for text in (
        linked.replace(
            'engram_commit = { approval_mode = "prompt" }', 'engram_commit = { approval_mode = "approve" }'
        ),
        linked.replace(
            'engram_commit = { approval_mode = "prompt" }', 'engram_commit = { approval_mode = "auto" }'
        ),
        f'[mcp_servers.engram]\ncommand = {command}\nargs = []\ndefault_tools_approval_mode = "approve"\n',
        f"[mcp_servers.engram]\ncommand = {command}\nargs = []\n",
    ):
        assert text != linked
        config.write_text(text)
        rc, env = run_json(capsys, "doctor")
        assert rc == 1, text
        [(file, message)] = gate_open(env)
        assert file == "~/.codex/config.toml" and COMMIT_TOOL in message
        [finding] = [f for f in env["data"]["findings"] if f["code"] == "host.gate_open"]
        assert "prompt" in finding["fix"] and finding["setting"]


# --- opencode ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "case_id", ["opencode-ws-jsonc", "opencode-global-jsonc", "opencode-ws-none", "opencode-global-none"]
)
def test_opencode_link_asks_before_the_commit_tool_and_unlink_removes_exactly_that(
    case_id: str,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 9: `opencode run` committed unasked; with an "ask" rule it asked and wrote nothing."""
    case = case_named(case_id)
    path, original = place(case, ws, private_home)
    rc, _, _ = run(capsys, "link", *case.argv())
    assert rc == 0
    created = [p for p in (path.with_suffix(".json"), path.with_suffix(".jsonc")) if p.exists()]
    config = parse_jsonc(created[0].read_text())
    assert config["permission"][OPENCODE_COMMIT] == "ask"
    assert opencode_decision(config, OPENCODE_COMMIT) == "ask"
    for tool in READ_TOOLS:
        assert opencode_decision(config, f"engram_{tool}") == "allow"
    assert opencode_bash_decision(config, "engram commit TOKEN") == "ask"
    assert opencode_bash_decision(config, "engram save-session --force") == "ask"
    before = parse_jsonc(original.decode()) if original is not None else {}
    assert opencode_bash_decision(config, "git status") == opencode_bash_decision(before, "git status")
    if original is not None:
        kept = dict(parse_jsonc(original.decode()).get("permission", {}))
        user_bash = kept.pop("bash", None)
        assert {k: v for k, v in config["permission"].items() if k not in (OPENCODE_COMMIT, "bash")} == kept
        if isinstance(user_bash, dict):
            assert list(config["permission"]["bash"].items())[: len(user_bash)] == list(user_bash.items())
        elif user_bash is not None:  # "ask" or "deny" for every command stays as it is; "allow" becomes "*"
            bash = config["permission"]["bash"]
            assert bash == user_bash if user_bash != "allow" else list(bash.items())[0] == ("*", "allow")
    rc, _, _ = run(capsys, "unlink", *case.argv())
    assert rc == 0
    if original is None:
        assert not created[0].exists()
    else:
        assert path.read_bytes() == original


def test_opencode_link_refuses_a_blanket_allow_string_and_writes_nothing(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """engram's choice: `"permission": "allow"` cannot take a per-tool rule; say how to fix it."""
    write(ws / "opencode.json", '{\n  "permission": "allow"\n}\n')
    before = tree_state(ws)
    rc, out, err = run(capsys, "link", "opencode")
    assert rc == 1
    assert "permission" in err and '"*": "allow"' in err
    assert tree_state(ws) == before


# --- Gemini ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case_id", ["gemini-ws", "gemini-global"])
def test_gemini_link_allows_the_read_and_proposal_tools_by_policy_and_asks_for_the_rest(
    case_id: str,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 19: Gemini 0.61 warns about `tools.allowed` on every run; a policy file allows the read
    and proposal tools (headless Gemini offers them) and asks for engram_commit and shell writes."""
    case = case_named(case_id)
    path, original = place(case, ws, private_home)
    assert original is not None
    rc, _, _ = run(capsys, "link", *case.argv())
    assert rc == 0
    config = parse_jsonc(path.read_text())
    kept = parse_jsonc(original.decode()).get("tools", {}).get("allowed")
    assert config.get("tools", {}).get("allowed") == kept, "link writes no tools.allowed"
    assert not gemini_allowed(config, GEMINI_COMMIT)
    rules = gemini_policy(private_home)
    for tool in (*READ_TOOLS, "engram_save", "engram_save_session"):
        assert gemini_policy_decision(rules, f"mcp_engram_{tool}") == "allow", tool
    assert gemini_policy_decision(rules, GEMINI_COMMIT) == "ask_user"
    for command in (
        "engram commit TOKEN",
        "engram save-session --force",
        "engram --json commit T",
        "engram ss -f",
    ):
        assert gemini_policy_decision(rules, "run_shell_command", command) == "ask_user", command
    assert gemini_policy_decision(rules, "run_shell_command", "engram search x") is None
    linked = path.read_bytes()
    rc, _, _ = run(capsys, "link", *case.argv())
    assert rc == 0 and path.read_bytes() == linked
    rc, _, _ = run(capsys, "unlink", *case.argv())
    assert rc == 0
    assert path.read_bytes() == original
    assert not (private_home / ".gemini" / "policies").exists()


def test_gemini_relink_takes_out_the_tools_allowed_an_older_link_wrote(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 19: an older link's `tools.allowed` entries (deprecated) go; the user's own stay."""
    original = '{\n  "tools": {\n    "allowed": ["mcp_engram_engram_search"]\n  }\n}\n'
    path = write(ws / ".gemini" / "settings.json", original)
    old = [f"mcp_engram_{t}" for t in READ_TOOLS]
    write(backup_path(path), original)  # the older link's backup of the original
    path.write_text(
        json.dumps(
            {"tools": {"allowed": old}, "mcpServers": {"engram": {"command": str(ENGRAM_MCP), "args": []}}}
        ),
        "utf-8",
    )
    rc, _, _ = run(capsys, "link", "gemini")
    assert rc == 0
    assert parse_jsonc(path.read_text())["tools"]["allowed"] == ["mcp_engram_engram_search"]
    rc, _, _ = run(capsys, "unlink", "gemini")
    assert rc == 0
    assert parse_jsonc(path.read_text()) == {"tools": {"allowed": ["mcp_engram_engram_search"]}}


def test_gemini_unlink_of_one_scope_keeps_the_policy_the_other_scope_needs(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "link", "gemini")[0] == 0
    assert run(capsys, "link", "gemini", "--global")[0] == 0
    assert run(capsys, "unlink", "gemini")[0] == 0
    assert gemini_policy(private_home), "the global link still needs it"
    assert run(capsys, "unlink", "gemini", "--global")[0] == 0
    assert not (private_home / ".gemini" / "policies" / "engram.toml").exists()


# --- nothing written anywhere auto-approves the commit tool ------------------------------------------
def _claude_allows(rules: list[str]) -> bool:
    return any(
        rule in ("mcp__engram", "mcp__engram__*") or fnmatch.fnmatchcase("mcp__engram__engram_commit", rule)
        for rule in rules
    )


def _auto_approves_commit(path: Path, text: str) -> str | None:
    """Why this written file would let engram_commit run unasked, or None."""
    name = path.name
    if MARK in text:  # an /engram command: only the two save-session forms may be pre-approved
        allowed = [t.strip() for t in str(front_matter(text).get("allowed-tools", "")).split(",") if t]
        shell = [t for t in allowed if t.startswith("Bash")]
        if _claude_allows(allowed) or any("commit" in t or "save-session" not in t for t in shell):
            return f"command pre-approves {allowed}"
        return None
    if name == "engram.rules":  # Codex command rules: only "prompt" decisions
        decisions = re.findall(r'decision\s*=\s*"(\w+)"', text)
        return None if decisions and set(decisions) == {"prompt"} else f"codex rules {decisions}"
    if name == "engram.toml":  # Gemini policy: the commit tool asks
        rules = list(tomllib.loads(text)["rule"])
        decision = gemini_policy_decision(rules, GEMINI_COMMIT)
        return None if decision == "ask_user" else f"gemini policy {decision}"
    if path.suffix == ".js":  # opencode's session-start plugin: it hooks no permission ask
        return "plugin answers permission asks" if "permission" in text else None
    if name == "config.toml":
        entry = tomllib.loads(text).get("mcp_servers", {}).get("engram")
        if entry is None:
            return None
        mode = entry.get("tools", {}).get(COMMIT_TOOL, {}).get("approval_mode")
        mode = mode or entry.get("default_tools_approval_mode") or "auto"
        return None if mode == "prompt" else f"codex approval_mode {mode}"
    data = parse_jsonc(text)
    if not isinstance(data, dict):
        return None
    if name.startswith("opencode"):
        decision = opencode_decision(data, OPENCODE_COMMIT)
        has_entry = "engram" in data.get("mcp", {})
        return f"opencode {decision}" if has_entry and decision == "allow" else None
    if path.parent.name == ".gemini" and name == "settings.json":
        return "gemini allows it" if gemini_allowed(data, GEMINI_COMMIT) else None
    permissions = data.get("permissions", {})
    if _claude_allows(permissions.get("allow", [])) or permissions.get("defaultMode") == "bypassPermissions":
        return "claude permissions"
    if name == "permissions.json" and any(
        fnmatch.fnmatchcase("engram:engram_commit", p) for p in data.get("mcpAllowlist", [])
    ):
        return "cursor allowlist"
    if data.get("chat.tools.global.autoApprove") or data.get("chat.tools.autoApprove"):
        return "vscode auto-approve"
    return None


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_nothing_link_writes_auto_approves_the_commit_tool(
    case: Case,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SPEC §4.2: nothing engram writes anywhere auto-approves engram_commit; doctor agrees."""
    place(case, ws, private_home)
    before = tree_state(ws, private_home, dirs=False)
    rc, env = run_json(capsys, "link", *case.argv())
    assert rc == 0, env
    after = tree_state(ws, private_home, dirs=False)
    changed = {k: v for k, v in after.items() if before.get(k) != v and not k.endswith(".bak")}
    assert changed, "link wrote something"
    for rel, data in changed.items():
        path = (ws.parent / rel) if not rel.startswith("home/") else private_home.parent / rel
        assert _auto_approves_commit(path, data.decode()) is None, rel
    rc, doctor = run_json(capsys, "doctor")
    assert gate_open(doctor) == []


# --- doctor audits the gate ---------------------------------------------------------------------------
OPEN_GATES = [
    (
        "claude-user-allow",
        "home",
        ".claude/settings.json",
        '{"permissions": {"allow": ["mcp__engram__engram_commit"]}}',
    ),
    (
        "claude-project-star",
        "ws",
        ".claude/settings.json",
        '{"permissions": {"allow": ["Bash(git *)", "mcp__engram__*"]}}',
    ),
    (
        "claude-local-server",
        "ws",
        ".claude/settings.local.json",
        '{"permissions": {"allow": ["mcp__engram"]}}',
    ),
    (
        "claude-bypass",
        "home",
        ".claude/settings.json",
        '{"permissions": {"defaultMode": "bypassPermissions"}}',
    ),
    (
        "claude-json-project",
        "home",
        ".claude.json",
        '{"projects": {"WS": {"allowedTools": ["mcp__engram__engram_commit"]}}}',
    ),
    ("opencode-exact", "ws", "opencode.json", '{"permission": {"engram_engram_commit": "allow"}}'),
    (
        "opencode-glob",
        "home",
        ".config/opencode/opencode.json",
        '{"permission": {"engram_engram_commit": "ask", "engram_*": "allow"}}',
    ),
    ("opencode-string", "ws", "opencode.json", '{"permission": "allow"}'),
    (
        "opencode-agent",
        "ws",
        "opencode.json",
        '{"permission": {"engram_engram_commit": "ask"}, "agent": {"build": {"permission": {"engram_*": "allow"}}}}',
    ),
    (
        "gemini-trust",
        "home",
        ".gemini/settings.json",
        '{"mcpServers": {"engram": {"command": CMD, "args": [], "trust": true}}}',
    ),
    ("gemini-tools-allowed", "ws", ".gemini/settings.json", '{"tools": {"allowed": ["mcp_engram_*"]}}'),
    ("gemini-mcp-allowed", "home", ".gemini/settings.json", '{"mcp": {"allowed": ["engram"]}}'),
    ("cursor-allowlist", "home", ".cursor/permissions.json", '{"mcpAllowlist": ["engram:*"]}'),
    (
        "vscode-auto-approve",
        "home",
        ".config/Code/User/settings.json",
        '{"chat.tools.global.autoApprove": true}',
    ),
]


@pytest.mark.parametrize("base,rel,text", [g[1:] for g in OPEN_GATES], ids=[g[0] for g in OPEN_GATES])
def test_doctor_reports_each_setting_that_lets_the_commit_run_unasked(
    base: str,
    rel: str,
    text: str,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SPEC §8: host.gate_open with file, setting and fix; exit 1."""
    place_setting(ws, private_home, base, rel, text)
    one_open_gate(capsys, base, rel)
    rc, out, err = run(capsys, "doctor")
    assert rc == 1 and "host.gate_open" in out + err and "Fix:" in out + err


def test_doctor_reads_claude_user_scope_servers_in_claude_json(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 9 / SPEC §8: Claude's user and local scopes live in ~/.claude.json; doctor reads them."""
    write(
        private_home / ".claude.json",
        json.dumps(
            {
                "mcpServers": {
                    "engram": {"type": "stdio", "command": "/opt/gone/bin/engram-mcp", "args": []}
                },
                "projects": {str(ws): {"mcpServers": {"engram": {"command": str(ENGRAM_MCP)}}}},
            }
        ),
    )
    rc, env = run_json(capsys, "doctor")
    assert rc == 1
    linked = env["data"]["linked"]
    assert any("~/.claude.json" in line and "user" in line for line in linked), linked
    assert any("~/.claude.json" in line and "local" in line for line in linked), linked
    assert [f["code"] for f in env["data"]["findings"]] == ["host.command_missing"]


# --- host steps still missing --------------------------------------------------------------------------
def steps(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    """The hosts' steps (the store's health notes, a fixture outside git, are not these)."""
    return [s for s in envelope["data"]["steps"] if s["code"].startswith("host.")]


def test_doctor_reports_a_claude_project_server_not_yet_approved_without_failing(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = run(capsys, "link", "claude")
    assert rc == 0
    assert "enabledMcpjsonServers" in out
    rc, env = run_json(capsys, "doctor")
    assert rc == 0, env
    [step] = steps(env)
    assert step["code"] == "host.step_pending" and step["file"].removeprefix("./") == ".mcp.json"
    assert "enabledMcpjsonServers" in step["fix"]
    write(
        private_home / ".claude.json",
        json.dumps({"projects": {str(ws): {"enabledMcpjsonServers": ["engram"]}}}),
    )
    rc, env = run_json(capsys, "doctor")
    assert rc == 0 and steps(env) == []
    rc, out, _ = run(capsys, "link", "claude")
    assert rc == 0 and "enabledMcpjsonServers" not in out


def test_doctor_reports_an_untrusted_gemini_folder_and_a_trusted_one_is_fine(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = run(capsys, "link", "gemini")
    assert rc == 0
    [line] = [line for line in out.splitlines() if "trustedFolders.json" in line]
    assert str(ws) in line and "TRUST_FOLDER" in line
    rc, env = run_json(capsys, "doctor")
    assert rc == 0
    assert [(s["code"], s["file"]) for s in steps(env)] == [
        ("host.step_pending", "~/.gemini/trustedFolders.json")
    ]
    write(private_home / ".gemini" / "trustedFolders.json", json.dumps({str(ws.parent): "TRUST_FOLDER"}))
    rc, env = run_json(capsys, "doctor")
    assert steps(env) == []
    # folder trust switched off: nothing to do either
    write(private_home / ".gemini" / "trustedFolders.json", json.dumps({str(ws): "DO_NOT_TRUST"}))
    rc, env = run_json(capsys, "doctor")
    assert len(steps(env)) == 1
    write(private_home / ".gemini" / "settings.json", '{"security": {"folderTrust": {"enabled": false}}}')
    rc, env = run_json(capsys, "doctor")
    assert steps(env) == []


def test_doctor_reports_an_untrusted_codex_project(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, _ = run(capsys, "link", "codex")
    assert rc == 0
    rc, env = run_json(capsys, "doctor")
    assert rc == 0
    [step] = steps(env)
    assert step["file"] == "~/.codex/config.toml" and "trust_level" in step["fix"]
    write(private_home / ".codex" / "config.toml", f'[projects."{ws}"]\ntrust_level = "untrusted"\n')
    rc, env = run_json(capsys, "doctor")
    assert len(steps(env)) == 1
    write(private_home / ".codex" / "config.toml", f'[projects."{ws}"]\ntrust_level = "trusted"\n')
    rc, env = run_json(capsys, "doctor")
    assert rc == 0
    # trusted: engram's prompt rule is read, and Codex's defaults still run every other command
    # in the workspace-write sandbox unasked, which doctor says (informational)
    assert [s["code"] for s in steps(env)] == ["host.shell_open"]
    write(
        private_home / ".codex" / "config.toml",
        f'approval_policy = "untrusted"\n[projects."{ws}"]\ntrust_level = "trusted"\n',
    )
    rc, env = run_json(capsys, "doctor")
    assert rc == 0 and steps(env) == []


def test_a_committed_claude_settings_file_does_not_count_as_approval(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """engram's choice: Claude Code ignores approval keys committed in .claude/settings.json of an
    untrusted folder, so doctor does not take them as the human's approval."""
    rc, _, _ = run(capsys, "link", "claude", "--no-hook")
    assert rc == 0
    write(ws / ".claude" / "settings.json", '{"enabledMcpjsonServers": ["engram"]}\n')
    rc, env = run_json(capsys, "doctor")
    assert [s["file"].removeprefix("./") for s in steps(env)] == [".mcp.json"]
    write(ws / ".claude" / "settings.local.json", '{"enabledMcpjsonServers": ["engram"]}\n')
    rc, env = run_json(capsys, "doctor")
    assert steps(env) == []


@pytest.mark.parametrize(
    "original",
    [
        '{\n  "permission": "ask"\n}\n',
        '{\n  "permission": {\n    "*": "ask",\n    "engram_engram_commit": "ask"\n  }\n}\n',
    ],
    ids=["string-ask", "rule-already-there"],
)
def test_opencode_rules_the_user_already_had_survive_link_and_unlink(
    original: str, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(ws / "opencode.json", original)
    rc, _, _ = run(capsys, "link", "opencode")
    assert rc == 0
    config = parse_jsonc(path.read_text())
    assert opencode_decision(config, OPENCODE_COMMIT) == "ask"
    assert parse_jsonc(original)["permission"] == config["permission"]
    rc, env = run_json(capsys, "doctor")
    assert gate_open(env) == []
    rc, _, _ = run(capsys, "unlink", "opencode")
    assert rc == 0 and path.read_text() == original


def test_relinking_gemini_drops_trust_true_from_engrams_own_entry(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SPEC §4.2: nothing link writes auto-approves the commit tool, a re-pinned entry included."""
    path = write(
        private_home / ".gemini" / "settings.json",
        f'{{"mcpServers": {{"engram": {{"command": {COMMAND}, "args": [], "timeout": 9000, "trust": true}}}}}}\n',
    )
    rc, env = run_json(capsys, "doctor")
    assert rc == 1 and len(gate_open(env)) == 1
    rc, _, _ = run(capsys, "link", "gemini", "--global")
    assert rc == 0
    entry = parse_jsonc(path.read_text())["mcpServers"]["engram"]
    assert "trust" not in entry and entry["timeout"] == 9000
    rc, env = run_json(capsys, "doctor")
    assert rc == 0 and gate_open(env) == []


def test_opencode_link_puts_its_rule_after_a_glob_that_would_allow_the_commit(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """opencode: the last matching rule wins, so engram's "ask" must come after `engram_*`."""
    path = write(
        ws / "opencode.json",
        '{\n  "permission": {\n    "engram_engram_commit": "allow",\n    "engram_*": "allow"\n  }\n}\n',
    )
    rc, _, _ = run(capsys, "link", "opencode")
    assert rc == 0
    config = parse_jsonc(path.read_text())
    assert opencode_decision(config, OPENCODE_COMMIT) == "ask"
    assert list(config["permission"]) == ["engram_*", OPENCODE_COMMIT, "bash"]
    rc, env = run_json(capsys, "doctor")
    assert gate_open(env) == []
