"""Acceptance: `engram link` / `engram unlink` on realistic host configs (SPEC §8, HOSTS.md).

Every target and scope engram writes gets a realistic "before" file from fixtures/hosts/
(comments, other servers, other keys, odd indentation, trailing commas, CRLF). The CLI runs
in-process; HOME is a temp dir (conftest).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.hosts.edits import backup_path
from engram_mcp.hosts.link import session_hooks
from engram_mcp.hosts.link.slash_commands import MARK
from tests.support.cli import run, run_json
from tests.support.host_configs import (
    BANNED,
    CASES,
    HOSTS,
    Case,
    assert_our_command,
    case_named,
    parse,
    place,
)
from tests.support.snapshots import tree_state

HOOK_MATCHER = "startup|resume|clear|compact"


def actions(envelope: dict[str, Any]) -> list[str]:
    return [r["action"] for r in envelope["data"]["results"]]


def assert_our_hook_command(command: Any) -> None:
    assert isinstance(command, str) and command.endswith(" hook session-start"), command
    program = command[: -len(" hook session-start")].strip('"')
    assert Path(program).name not in BANNED
    assert program == "engram" or (os.path.isabs(program) and program.endswith("/engram")), command


GATE_RULES = {
    "opencode": ('"engram_engram_commit": "ask"', ' commit *": "ask"'),
    "gemini": ('"mcp_engram_engram_',),
}
CLAUDE_ASK = ("Bash(engram commit *)",)
"""What link adds beside the entry so the host asks before engram_commit (gate_rules.py)."""


def assert_only_inserted(before: str, after: str, needle: str, rules: tuple[str, ...] = ()) -> None:
    """Everything except engram's entry is byte-identical: `after` is `before` plus one inserted
    span holding the entry (and at most one separate comma), plus spans holding engram's approval
    rules, nothing reformatted."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    inserted = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        assert tag in ("equal", "insert"), f"{tag}: {before[i1:i2]!r} -> {after[j1:j2]!r}"
        if tag == "insert":
            inserted.append(after[j1:j2])
    with_entry = [chunk for chunk in inserted if needle in chunk]
    rest = [chunk for chunk in inserted if needle not in chunk and not any(r in chunk for r in rules)]
    assert len(with_entry) == 1, inserted
    assert all(chunk.strip() == "," for chunk in rest) and len(rest) <= 1, f"other bytes changed: {rest!r}"


# --- the target table ------------------------------------------------------------------------
FILE_CASES = [c for c in CASES if c.fixture is not None]
SETTINGS_FIXTURE = HOSTS / "claude-workspace.settings.json"


def engram_entry(case: Case, data: Any) -> Any:
    node = data
    for key in case.container:
        node = node[key]
    return node["engram"]


def check_entry(case: Case, data: Any) -> dict[str, Any]:
    entry = engram_entry(case, data)
    assert isinstance(entry, dict)
    if case.target == "opencode":
        assert entry["type"] == "local"
        assert isinstance(entry["command"], list)
        assert_our_command(entry["command"][0])
        assert "args" not in entry and "env" not in entry
        return entry
    assert_our_command(entry["command"])
    assert isinstance(entry.get("args", []), list)
    assert all(a not in BANNED for a in entry.get("args", []))
    if case.target == "vscode":
        assert entry["type"] == "stdio"
    if case.target == "codex":
        assert entry["tools"]["engram_commit"]["approval_mode"] == "prompt"
        assert "type" not in entry
    return entry


# --- the round trip --------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_link_twice_then_unlink_restores_the_original_bytes(
    case: Case,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, original = place(case, ws, private_home)
    settings = ws / ".claude" / "settings.json"
    settings_original = None
    if case.target == "claude":
        settings.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SETTINGS_FIXTURE, settings)
        settings_original = settings.read_bytes()
    if original is not None:
        path.chmod(0o600)
    untouched_before = {
        k: v
        for k, v in tree_state(ws, private_home, dirs=False).items()
        if case.rel not in k and "settings.json" not in k
    }

    all_before = tree_state(ws, private_home)
    rc, env = run_json(capsys, "link", *case.argv())
    assert rc == 0, env
    assert actions(env)[0] == "added"
    linked = path.read_bytes()
    commands = command_paths(case, ws, private_home)
    for command in commands:
        assert MARK in command.read_text("utf-8"), f"link installs {command} beside the entry"
    assert [r["file"] for r in env["data"]["results"] if r["message"] == "/engram command"] == [
        display(c, ws, private_home) for c in commands
    ]
    data = parse(path, case.fmt)
    check_entry(case, data)
    if original is not None:
        # the file mode is kept; one backup holds the original, under $ENGRAM_HOME, none beside it
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert not [p.name for p in path.parent.iterdir() if ".bak" in p.name]
        assert backup_path(path).read_bytes() == original
        # everything except engram's entry is byte-identical
        needle = "mcp_servers.engram" if case.fmt == "toml" else '"engram"'
        shown = linked.decode()
        if case.id == "gemini-ws":  # its SessionStart hook is in the same file: checked on its own
            assert session_hooks.commands_in("gemini", shown) == ["engram hook session-start --host gemini"]
            shown = session_hooks.gemini_unlinked(shown, original.decode())
        assert_only_inserted(original.decode(), shown, needle, GATE_RULES.get(case.target, ()))
        if b"\r\n" in original:
            assert linked.count(b"\n") == linked.count(b"\r\n"), "CRLF file got LF line endings"
    if case.fmt == "toml":
        lines = linked.decode().splitlines()
        header = lines.index("[mcp_servers.engram]")
        assert lines[header - 1].startswith("#"), "the managed block is marked by a TOML comment"
    if case.target == "claude":
        hooks = parse(settings, "json")["hooks"]["SessionStart"]
        ours = [
            g for g in hooks if any(h.get("command", "").endswith("hook session-start") for h in g["hooks"])
        ]
        assert len(ours) == 1 and ours[0]["matcher"] == HOOK_MATCHER
        assert_our_hook_command(ours[0]["hooks"][0]["command"])
        assert settings_original is not None
        assert_only_inserted(
            settings_original.decode(), settings.read_text(), "hook session-start", CLAUDE_ASK
        )
        assert (
            parse(settings, "json")["hooks"]["PostToolUse"]
            == json.loads(settings_original)["hooks"]["PostToolUse"]
        )
    if case.id == "antigravity-legacy":
        assert not (private_home / ".gemini" / "config" / "mcp_config.json").exists()

    # a second link changes nothing
    settings_linked = settings.read_bytes() if case.target == "claude" else None
    rc, env = run_json(capsys, "link", *case.argv())
    assert rc == 0
    assert set(actions(env)) == {"unchanged"}
    assert path.read_bytes() == linked
    if settings_linked is not None:
        assert settings.read_bytes() == settings_linked

    # unlink restores the original bytes (or removes the file link created)
    rc, env = run_json(capsys, "unlink", *case.argv())
    assert rc == 0, env
    assert actions(env)[0] == ("removed" if original is None else "restored")
    if original is None:
        assert not path.exists() and not path.with_suffix(".jsonc").exists()
    else:
        assert path.read_bytes() == original
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert not [p.name for p in path.parent.iterdir() if ".bak" in p.name]
        assert not backup_path(path).exists(), "unlink removes the backup it restored from"
    if case.target == "claude":
        assert settings.read_bytes() == settings_original
    untouched_after = {
        k: v
        for k, v in tree_state(ws, private_home, dirs=False).items()
        if case.rel not in k and "settings.json" not in k
    }
    assert untouched_after == untouched_before
    assert not any(c.exists() for c in commands), "unlink removes the /engram command"
    leftover = {k for k in tree_state(ws, private_home) if k not in all_before}
    assert leftover == set(), f"unlink leaves no folder the link created: {leftover}"


COMMAND_FILES = {
    "claude": (".claude/commands/engram.md",),
    "gemini": (".gemini/commands/engram.toml",),
    "codex": (".agents/skills/engram/SKILL.md", ".agents/skills/engram/agents/openai.yaml"),
    "opencode": (".opencode/commands/engram.md",),
    "cursor": (".cursor/commands/engram.md",),
    "vscode": (".github/prompts/engram.prompt.md",),
}
COMMAND_FILES_GLOBAL = {
    **COMMAND_FILES,
    "claude": (".claude/commands/engram.md",),
    "opencode": (".config/opencode/commands/engram.md",),
    "vscode": (".config/Code/User/prompts/engram.prompt.md",),
    "windsurf": (".codeium/windsurf/global_workflows/engram.md",),
}
"""Where `link` installs the `/engram` command (commands.py), per target and scope (Linux)."""


def command_paths(case: Case, workspace: Path, home: Path) -> list[Path]:
    table = COMMAND_FILES_GLOBAL if case.global_ else COMMAND_FILES
    base = home if case.global_ else workspace
    return [base / rel for rel in table.get(case.target, ())]


def display(path: Path, workspace: Path, home: Path) -> str:
    try:
        return "./" + path.relative_to(workspace).as_posix()
    except ValueError:
        return "~/" + path.relative_to(home).as_posix()


@pytest.mark.parametrize("case", [c for c in CASES if c.fixture is None], ids=lambda c: c.id)
def test_link_creates_one_opencode_file_when_none_exists(
    case: Case,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = case.path(ws, private_home).parent
    rc, _, _ = run(capsys, "link", *case.argv())
    assert rc == 0
    created = [p for p in (folder / "opencode.json", folder / "opencode.jsonc") if p.exists()]
    assert len(created) == 1, "exactly one opencode config file"
    data = parse(created[0], "jsonc")
    entry = check_entry(case, data)
    assert entry["command"][0].endswith("engram-mcp")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_dry_run_prints_the_diff_and_writes_nothing(
    case: Case,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    place(case, ws, private_home)
    before = tree_state(ws, private_home)
    rc, out, _ = run(capsys, "link", *case.argv(), "--dry-run")
    assert rc == 0
    assert "+++" in out and "---" in out
    added = [line for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert any("engram" in line for line in added), out
    assert tree_state(ws, private_home) == before


def _broken(fmt: str) -> str:
    if fmt == "toml":
        return '# codex\nmodel = "gpt-5"\n[mcp_servers.docs\ncommand = "npx"\n'
    return '{\n  "mcpServers": {\n    "docs": {"command": "npx",, "args": []}\n  }\n}\n'


@pytest.mark.parametrize("case", FILE_CASES, ids=lambda c: c.id)
def test_a_file_that_does_not_parse_is_left_untouched_and_named_with_its_line(
    case: Case,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = case.path(ws, private_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_broken(case.fmt))
    before = tree_state(ws, private_home)
    rc, out, err = run(capsys, "link", *case.argv())
    assert rc == 1
    assert case.rel in err, err
    assert re.search(r"\bline 3\b", err), err
    assert "Traceback" not in out + err
    assert tree_state(ws, private_home) == before
    rc, out, err = run(capsys, "unlink", *case.argv())
    assert rc == 1 and case.rel in err and re.search(r"\bline 3\b", err), err
    assert tree_state(ws, private_home) == before


# --- targets with no file in a scope ---------------------------------------------------------
def test_claude_global_prints_the_claude_mcp_add_line_and_writes_nothing(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_state(ws, private_home)
    rc, out, _ = run(capsys, "link", "claude", "--global")
    assert rc == 0
    match = re.search(r"claude mcp add --scope user engram -- (\S+)", out)
    assert match, out
    assert_our_command(match.group(1).strip('"').rstrip(")"))
    assert not any(word in out.split() for word in BANNED)
    after = tree_state(ws, private_home)
    command = "home/.claude/commands/engram.md"
    settings = "home/.claude/settings.json"
    assert {k for k in after if k not in before} == {
        command,
        settings,
        "home/.claude/",
        "home/.claude/commands/",
    }
    assert {k: v for k, v in after.items() if k in before} == before, "only the command and ask rules"
    ask = json.loads((private_home / ".claude" / "settings.json").read_text())["permissions"]["ask"]
    assert "Bash(engram commit *)" in ask and "Bash(engram save-session *)" in ask
    assert not (private_home / ".claude.json").exists()
    rc, _, _ = run(capsys, "unlink", "claude", "--global")
    assert rc == 0 and tree_state(ws, private_home) == before


@pytest.mark.parametrize("target", ["windsurf", "antigravity", "claude-desktop"])
def test_targets_without_a_workspace_file_refuse_and_name_the_global_link(
    target: str,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 22: `link windsurf` in a workspace said "skipped" with exit 0."""
    before = tree_state(ws, private_home)
    rc, env = run_json(capsys, "link", target)
    assert rc == 1
    [diagnostic] = env["diagnostics"]
    assert diagnostic["code"] == "ENGRAM_GLOBAL_ONLY"
    assert f"engram link {target} --global" in diagnostic["message"]
    rc, out, err = run(capsys, "unlink", target)
    assert rc == 1 and f"engram unlink {target} --global" in err
    assert tree_state(ws, private_home) == before


# --- foreign `engram` entries ----------------------------------------------------------------
@dataclass(frozen=True)
class Foreign:
    case: Case
    text: str
    command: str
    others: tuple[str, ...] = ()


FOREIGN = [
    Foreign(
        case_named("claude-ws"),
        '{\n  "mcpServers": {\n    "engram": {\n      "command": "uvx",\n      "args": ["engram-mcp"]\n    },\n'
        '    "github": {"command": "gh-mcp"}\n  }\n}\n',
        "uvx",
        ("github",),
    ),
    Foreign(
        case_named("codex-global"),
        '# other memory tool\n[mcp_servers.engram]\ncommand = "npx"\nargs = ["-y", "other-engram"]\n\n'
        '[mcp_servers.docs]\ncommand = "docs-mcp"\n',
        "npx",
        ("docs",),
    ),
    Foreign(
        case_named("cursor-global-crlf"),
        '{\r\n  // installed by other-engram\r\n  "mcpServers": {\r\n    "engram": { "command": "npx", "args": ["-y", "other-engram"] },\r\n  }\r\n}\r\n',
        "npx",
    ),
    Foreign(
        case_named("gemini-ws"),
        '{\n\t"mcpServers": {\n\t\t"engram": {"command": "uvx", "args": ["engram-mcp"], "trust": true}\n\t}\n}\n',
        "uvx",
    ),
    Foreign(
        case_named("opencode-ws-jsonc"),
        '{\n  "mcp": {\n    // someone else\'s engram\n    "engram": {"type": "local", "command": ["uvx", "engram-mcp"]},\n  },\n}\n',
        "uvx",
    ),
    Foreign(
        case_named("vscode-ws"),
        '{\n    "servers": {\n        "engram": {"type": "stdio", "command": "npx", "args": ["-y", "other-engram"]}\n    }\n}\n',
        "npx",
    ),
]


@pytest.mark.parametrize("foreign", FOREIGN, ids=lambda f: f.case.id)
def test_a_foreign_engram_entry_survives_link_and_unlink_and_force_replaces_it(
    foreign: Foreign,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = foreign.case
    path = case.path(ws, private_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(foreign.text.encode())
    before = tree_state(ws, private_home)
    for verb in ("link", "unlink"):
        rc, out, err = run(capsys, verb, *case.argv())
        assert rc == 1, (verb, out, err)
        assert case.rel in err and foreign.command in err, err
        assert tree_state(ws, private_home) == before, verb
    rc, out, err = run(capsys, "link", *case.argv(), "--force")
    assert rc == 0, out + err
    data = parse(path, case.fmt)
    check_entry(case, data)
    # the other servers stay
    assert sorted(k for k in data[case.container[0]] if k != "engram") == sorted(foreign.others)


# --- --always-load ---------------------------------------------------------------------------
def test_no_hook_claude_link_gets_always_load_and_no_hook(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, _ = run(capsys, "link", "claude", "--no-hook")
    assert rc == 0
    entry = json.loads((ws / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["args"] == ["--always-load"]
    assert_our_command(entry["command"])
    settings = json.loads((ws / ".claude" / "settings.json").read_text())
    assert "hooks" not in settings and "Bash(engram commit *)" in settings["permissions"]["ask"]


def test_claude_link_with_the_hook_writes_no_always_load(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, _ = run(capsys, "link", "claude")
    assert rc == 0
    entry = json.loads((ws / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert "--always-load" not in entry.get("args", [])
    assert (ws / ".claude" / "settings.json").exists()
    # a later --no-hook link does not add it while our hook is installed
    rc, _, _ = run(capsys, "link", "claude", "--no-hook")
    assert rc == 0
    entry = json.loads((ws / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert "--always-load" not in entry.get("args", [])


@pytest.mark.parametrize(
    "case_id",
    ["codex-global", "cursor-ws", "cursor-global-crlf", "gemini-ws", "gemini-global", "windsurf-global"],
)
def test_other_hosts_never_get_always_load(
    case_id: str,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = case_named(case_id)
    path, _ = place(case, ws, private_home)
    rc, _, _ = run(capsys, "link", *case.argv(), "--no-hook")
    assert rc == 0
    entry = check_entry(case, parse(path, case.fmt))
    assert "--always-load" not in entry.get("args", [])
    assert "--always-load" not in path.read_text()


def test_claude_link_without_prior_settings_round_trips_and_removes_the_hook_file(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = case_named("claude-ws")
    path, original = place(case, ws, private_home)
    before = tree_state(ws, private_home)
    rc, env = run_json(capsys, "link", "claude")
    assert rc == 0 and actions(env) == ["added", "added", "added"]
    hooks = json.loads((ws / ".claude" / "settings.json").read_text())["hooks"]["SessionStart"]
    assert [g["matcher"] for g in hooks] == [HOOK_MATCHER]
    assert_our_hook_command(hooks[0]["hooks"][0]["command"])
    assert (ws / ".claude" / "commands" / "engram.md").is_file()
    rc, env = run_json(capsys, "link", "claude")
    assert rc == 0 and actions(env) == ["unchanged", "unchanged", "unchanged"]
    rc, env = run_json(capsys, "unlink", "claude")
    assert rc == 0 and actions(env) == ["restored", "removed", "removed"]
    assert path.read_bytes() == original
    assert tree_state(ws, private_home) == before
    assert not (ws / ".claude").exists()
