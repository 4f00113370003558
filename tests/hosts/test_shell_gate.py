"""Doctor sees the shell door to the gate (review H1) and the remaining audit gaps (review L2).

An agent whose host runs its shell commands unasked can run `engram commit TOKEN` or
`engram save-session --force` itself; doctor reports the settings that allow it as
host.gate_open (exit 1), and a linked host whose shell is ungated by its defaults as
host.shell_ungated (exit 1 too: issue 19).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run, run_json
from tests.support.files import write
from tests.support.host_configs import gate_open, one_open_gate, place_setting
from tests.support.paths import ENGRAM_MCP

CMD = str(ENGRAM_MCP)

SHELL_OPEN = [
    ("claude-bash", "ws", ".claude/settings.local.json", '{"permissions": {"allow": ["Bash"]}}'),
    ("claude-bash-star", "home", ".claude/settings.json", '{"permissions": {"allow": ["Bash(*)"]}}'),
    (
        "claude-engram-prefix",
        "ws",
        ".claude/settings.local.json",
        '{"permissions": {"allow": ["Bash(engram:*)"]}}',
    ),
    (
        "claude-commit-prefix",
        "ws",
        ".claude/settings.json",
        '{"permissions": {"allow": ["Bash(engram commit:*)"]}}',
    ),
    (
        "claude-save-prefix",
        "ws",
        ".claude/settings.local.json",
        '{"permissions": {"allow": ["Bash(engram save-session:*)"]}}',
    ),
    (
        "claude-engram-glob",
        "ws",
        ".claude/settings.local.json",
        '{"permissions": {"allow": ["Bash(engram *)"]}}',
    ),
    ("claude-auto-mode", "home", ".claude/settings.json", '{"permissions": {"defaultMode": "auto"}}'),
    (
        "claude-json-bash",
        "home",
        ".claude.json",
        '{"projects": {"WS": {"allowedTools": ["Bash(engram commit:*)"]}}}',
    ),
    (
        "opencode-bash-allow",
        "ws",
        "opencode.json",
        '{"permission": {"engram_engram_commit": "ask", "bash": "allow"}}',
    ),
    (
        "opencode-bash-engram",
        "home",
        ".config/opencode/opencode.json",
        '{"permission": {"engram_engram_commit": "ask", "bash": {"*": "ask", "engram *": "allow"}}}',
    ),
    (
        "opencode-star-allow",
        "ws",
        "opencode.json",
        '{"permission": {"*": "allow", "engram_engram_commit": "ask"}}',
    ),
    (
        "codex-never-workspace-write",
        "home",
        ".codex/config.toml",
        'approval_policy = "never"\nsandbox_mode = "workspace-write"',
    ),
    (
        "codex-on-request-full-access",
        "home",
        ".codex/config.toml",
        'approval_policy = "on-request"\nsandbox_mode = "danger-full-access"',
    ),
    (
        "codex-granular-workspace-write",
        "home",
        ".codex/config.toml",
        'sandbox_mode = "workspace-write"\n[approval_policy.granular]\nrules = true\nsandbox_approval = true',
    ),
    (
        "codex-workspace-write-default-approval",
        "home",
        ".codex/config.toml",
        'sandbox_mode = "workspace-write"',
    ),
    ("gemini-shell", "ws", ".gemini/settings.json", '{"tools": {"allowed": ["run_shell_command"]}}'),
    (
        "gemini-shell-engram",
        "home",
        ".gemini/settings.json",
        '{"tools": {"allowed": ["run_shell_command(engram)"]}}',
    ),
    (
        "gemini-policy-shell",
        "home",
        ".gemini/policies/mine.toml",
        '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "engram commit"\ndecision = "allow"\npriority = 100',
    ),
]


@pytest.mark.parametrize("base,rel,text", [g[1:] for g in SHELL_OPEN], ids=[g[0] for g in SHELL_OPEN])
def test_doctor_reports_each_setting_that_lets_an_agent_run_engrams_cli_unasked(
    base: str,
    rel: str,
    text: str,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Review H1: `engram commit` / `save-session --force` through the agent's shell is a second
    commit door; doctor reports what opens it as host.gate_open with file, setting and fix."""
    place_setting(ws, private_home, base, rel, text)
    finding = one_open_gate(capsys, base, rel)
    assert "engram" in finding["message"]
    rc, out, err = run(capsys, "doctor")
    assert rc == 1 and "Fix:" in out + err


SHELL_PROMPTS = [
    (
        "claude-git-only",
        "ws",
        ".claude/settings.local.json",
        '{"permissions": {"allow": ["Bash(git:*)", "Bash(npm run test *)"]}}',
    ),
    (
        "claude-engramx",
        "ws",
        ".claude/settings.local.json",
        '{"permissions": {"allow": ["Bash(engramx:*)", "Bash(engram status)"]}}',
    ),
    (
        "claude-bash-but-ask-engram",
        "ws",
        ".claude/settings.local.json",
        '{"permissions": {"allow": ["Bash"], "ask": ["Bash(engram:*)"]}}',
    ),
    (
        "claude-accept-edits",
        "ws",
        ".claude/settings.local.json",
        '{"permissions": {"defaultMode": "acceptEdits"}}',
    ),
    (
        "opencode-engram-ask",
        "ws",
        "opencode.json",
        '{"permission": {"engram_engram_commit": "ask", "bash": {"*": "allow", "engram *": "ask"}}}',
    ),
    (
        "codex-never-read-only",
        "home",
        ".codex/config.toml",
        'approval_policy = "never"\nsandbox_mode = "read-only"',
    ),
    (
        "codex-untrusted",
        "home",
        ".codex/config.toml",
        'approval_policy = "untrusted"\nsandbox_mode = "workspace-write"',
    ),
    ("gemini-git-only", "ws", ".gemini/settings.json", '{"tools": {"allowed": ["run_shell_command(git)"]}}'),
    ("gemini-auto-edit", "ws", ".gemini/settings.json", '{"general": {"defaultApprovalMode": "auto_edit"}}'),
]


@pytest.mark.parametrize("base,rel,text", [g[1:] for g in SHELL_PROMPTS], ids=[g[0] for g in SHELL_PROMPTS])
def test_settings_that_still_prompt_before_engrams_cli_are_not_reported(
    base: str,
    rel: str,
    text: str,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No noise: a rule that still asks before `engram commit` is not a finding."""
    place_setting(ws, private_home, base, rel, text)
    rc, env = run_json(capsys, "doctor")
    assert gate_open(env) == [], env
    assert rc == 0, env


def test_opencode_linked_without_a_bash_rule_fails_doctor_until_link_adds_it(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 19: opencode linked as the README said (entry and commit rule) ran `engram commit`
    through bash; doctor knew (host.shell_ungated) but exited 0. Now it exits 1, and link fixes it."""
    config = {
        "mcp": {"engram": {"type": "local", "command": [CMD], "enabled": True}},
        "permission": {"engram_engram_commit": "ask"},
    }
    write(ws / "opencode.json", json.dumps(config, indent=2))
    rc, env = run_json(capsys, "doctor")
    ungated = [f for f in env["data"]["findings"] if f["code"] == "host.shell_ungated"]
    assert rc == 1 and len(ungated) == 1, env
    assert ungated[0]["file"] == "./opencode.json" and "engram link opencode" in ungated[0]["fix"]
    rc, out, err = run(capsys, "link", "opencode")
    assert rc == 0, out + err
    rc, env = run_json(capsys, "doctor")
    assert rc == 0 and env["data"]["findings"] == [], env


def test_codex_in_a_trusted_project_on_its_defaults_fails_doctor_until_link_adds_the_rule(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 19: in a project trusted as `engram link codex` asks, Codex's sandbox defaults to
    workspace-write and the model ran `engram commit` unasked; doctor said "OK: nothing to fix"."""
    user = private_home / ".codex" / "config.toml"
    write(user, f'[projects."{ws}"]\ntrust_level = "trusted"\n')
    write(
        ws / ".codex" / "config.toml",
        f'[mcp_servers.engram]\ncommand = "{CMD}"\nargs = []\n\n'
        '[mcp_servers.engram.tools]\nengram_commit = { approval_mode = "prompt" }\n',
    )
    rc, env = run_json(capsys, "doctor")
    ungated = [f for f in env["data"]["findings"] if f["code"] == "host.shell_ungated"]
    assert rc == 1 and len(ungated) == 1, env
    assert "workspace-write" in ungated[0]["message"] and "engram link codex" in ungated[0]["fix"]
    rc, out, err = run(capsys, "link", "codex", "--force")
    assert rc == 0, out + err
    assert (ws / ".codex" / "rules" / "engram.rules").is_file()
    rc, env = run_json(capsys, "doctor")
    assert rc == 0 and env["data"]["findings"] == [], env


def test_codex_reads_no_project_config_in_an_untrusted_project_and_neither_does_doctor(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex ignores `.codex/` of a project it does not trust: its settings open nothing, and a
    trusted project's `never` with full access is reported."""
    write(
        ws / ".codex" / "config.toml",
        'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n',
    )
    rc, env = run_json(capsys, "doctor")
    assert gate_open(env) == [], env
    write(private_home / ".codex" / "config.toml", f'[projects."{ws}"]\ntrust_level = "trusted"\n')
    rc, env = run_json(capsys, "doctor")
    assert rc == 1 and [f[0] for f in gate_open(env)] == ["./.codex/config.toml"], env


# --- L2: opencode markdown agents ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "base,rel,permission",
    [
        ("ws", ".opencode/agent/review.md", "  engram_engram_commit: allow"),
        ("home", ".config/opencode/agent/helper.md", '  "engram_*": allow'),
        ("ws", ".opencode/agent/shell.md", "  bash: allow"),
        ("ws", ".opencode/agents/shell.md", "  bash:\n    'engram *': allow"),
    ],
    ids=["ws-commit", "home-glob", "ws-bash", "ws-plural-bash-pattern"],
)
def test_doctor_reads_opencode_agents_defined_in_markdown(
    base: str,
    rel: str,
    permission: str,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Review L2: `.opencode/agent/*.md` front matter `permission:` rules are audited."""
    write(ws / "opencode.json", '{"permission": {"engram_engram_commit": "ask", "bash": "ask"}}\n')
    text = f"---\ndescription: an agent\npermission:\n{permission}\n---\nYou review code.\n"
    write((ws if base == "ws" else private_home) / rel, text)
    rc, env = run_json(capsys, "doctor")
    found = [f for f in env["data"]["findings"] if f["code"] == "host.gate_open"]
    assert rc == 1 and len(found) == 1, env
    assert found[0]["file"].removeprefix("./") == (rel if base == "ws" else f"~/{rel}")


# --- L2: engram under another server name -------------------------------------------------------------
RENAMED = {
    "claude": (".mcp.json", {"mcpServers": {"mem": {"command": CMD, "args": []}}}),
    "opencode": (
        "opencode.json",
        {"mcp": {"mem": {"type": "local", "command": [CMD]}}, "permission": {"bash": "ask"}},
    ),
    "gemini": (".gemini/settings.json", {"mcpServers": {"mem": {"command": CMD, "trust": True}}}),
}


@pytest.mark.parametrize(
    "host,extra",
    [
        ("claude", (".claude/settings.local.json", '{"permissions": {"allow": ["mcp__mem"]}}')),
        (
            "claude",
            (".claude/settings.local.json", '{"permissions": {"allow": ["mcp__mem__engram_commit"]}}'),
        ),
        ("opencode", None),
        ("gemini", None),
        ("codex", None),
    ],
    ids=["claude-server", "claude-tool", "opencode-default", "gemini-trust", "codex-auto"],
)
def test_doctor_audits_engram_registered_under_another_name(
    host: str,
    extra: tuple[str, str] | None,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Review L2: a server named `mem` that runs this engram-mcp is audited under its own name."""
    if host == "codex":
        write(ws / ".codex" / "config.toml", f'[mcp_servers.mem]\ncommand = "{CMD}"\n')
    else:
        rel, data = RENAMED[host]
        write(ws / rel, json.dumps(data))
    if extra is not None:
        write(ws / extra[0], extra[1])
    rc, env = run_json(capsys, "doctor")
    found = gate_open(env)
    assert rc == 1 and len(found) == 1, env
    assert "mem" in found[0][1], found


def test_codex_trusted_project_with_approval_untrusted_is_not_reported(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`approval_policy = "untrusted"` asks before every command that is not known safe."""
    write(
        private_home / ".codex" / "config.toml",
        f'approval_policy = "untrusted"\n\n[projects."{ws}"]\ntrust_level = "trusted"\n\n'
        f'[mcp_servers.engram]\ncommand = "{CMD}"\n\n[mcp_servers.engram.tools.engram_commit]\n'
        'approval_mode = "prompt"\n',
    )
    rc, env = run_json(capsys, "doctor")
    assert rc == 0 and env["data"]["findings"] == [], env
