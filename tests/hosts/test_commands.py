"""Acceptance: the `/engram` command `engram link` installs in every host that has custom
commands (SPEC §7 "/engram in the hosts", §8), in that host's own format.

fixtures/hosts/commands/ holds each installed file as the host reads it (with the `engram`
CLI on PATH); `ENGRAM_REGOLD=1` rewrites them after an intended change.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
import yaml

from engram_mcp.hosts.link import slash_commands
from engram_mcp.hosts.link.slash_commands import MARK, command_files, engram_command, render
from tests.support.cli import run, run_json
from tests.support.host_configs import front_matter
from tests.support.host_rules import claude_bash_allows
from tests.support.paths import FIXTURES

GOLDEN = FIXTURES / "hosts" / "commands"
FILES = [
    ("claude", "engram.md"),
    ("gemini", "engram.toml"),
    ("codex", "SKILL.md"),
    ("codex", "openai.yaml"),
    ("opencode", "engram.md"),
    ("cursor", "engram.md"),
    ("vscode", "engram.prompt.md"),
    ("windsurf", "engram.md"),
]
HOSTS_WITH_COMMANDS = ["claude", "gemini", "codex", "opencode", "cursor", "vscode"]


def prompt_of(target: str, text: str) -> str:
    """The text the host sends the model, from the file as the host parses it."""
    if target == "gemini":
        return str(tomllib.loads(text)["prompt"])
    if text.startswith("---\n"):
        return text[text.index("\n---\n", 4) + 5 :]
    return text


@pytest.mark.parametrize(("target", "name"), FILES, ids=lambda v: str(v))
def test_each_installed_command_matches_its_fixture(target: str, name: str) -> None:
    """engram's own choice: the fixtures show every host's file; a change arrives as a diff."""
    text = render(target, name, "engram")
    golden = GOLDEN / f"{target}.{name}"
    if os.environ.get("ENGRAM_REGOLD"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, "utf-8")
    assert text == golden.read_text("utf-8")


@pytest.mark.parametrize(("target", "name"), FILES, ids=lambda v: str(v))
def test_each_command_is_in_its_hosts_documented_format(target: str, name: str) -> None:
    """Host docs (commands.py docstring): the keys and placeholders each host reads."""
    text = (GOLDEN / f"{target}.{name}").read_text("utf-8")
    assert MARK in text, "doctor and unlink recognise the file by its mark"
    if target == "gemini":
        data = tomllib.loads(text)
        assert set(data) == {"description", "prompt"} and "{{args}}" in data["prompt"]
        return
    if name == "openai.yaml":
        assert yaml.safe_load(text) == {"policy": {"allow_implicit_invocation": False}}
        return
    front = front_matter(text)
    documented = {
        "claude": {"description", "argument-hint", "allowed-tools", "disable-model-invocation"},
        "codex": {"name", "description"},
        "opencode": {"description"},
        "cursor": set(),
        "vscode": {"description", "argument-hint", "agent"},
        "windsurf": {"description"},
    }[target]
    assert set(front) == documented
    if target == "claude":
        # the model may not run /engram through its SlashCommand tool: the human types it
        assert front["disable-model-invocation"] is True
        allowed = [t.strip() for t in front["allowed-tools"].split(",")]
        reads = ("search", "load", "status", "save_session")  # write nothing durable
        assert allowed == [f"mcp__engram__engram_{tool}" for tool in reads]
    if target == "codex":
        assert front["name"] == "engram" and len(front["description"]) <= 1024
    if target in ("claude", "opencode"):
        assert "$ARGUMENTS" in text


@pytest.mark.parametrize(
    ("target", "name"), [f for f in FILES if f[1] != "openai.yaml"], ids=lambda v: str(v)
)
def test_the_command_tells_the_agent_how_to_handle_each_request(target: str, name: str) -> None:
    """SPEC §7 (issue 19): the force path goes through engram_save_session and the host's prompt
    on engram_commit (ADDs only, the force rule), counted sessions pass query_level, reads go to
    the read tools, other writes through the approval path; nothing runs engram in the shell."""
    said = prompt_of(target, (GOLDEN / f"{target}.{name}").read_text("utf-8"))
    rules = said.split("\n\n")
    force = " ".join(next(r for r in rules if r.startswith("1.")).split())
    assert "`ss -f`" in force and "`save-session --force`" in force
    if target in ("claude", "codex", "gemini", "opencode"):  # engram reads their sessions: this host's only
        assert f'`engram_save_session` tool with `query_level` 1 and `host` "{target}"' in force
    else:  # engram cannot read them: the human's own messages, as text, never another host's session
        assert "`engram_save_session` tool with `text` set to the messages the human typed" in force
        assert "query_level" not in force
    assert force.index("preview") < force.index("`engram_commit`") and "verdict is ADD" in force
    counted = " ".join(next(r for r in rules if r.startswith("2.")).split())
    assert "last N sessions" in counted
    if target in ("claude", "codex", "gemini", "opencode"):
        assert f'`query_level` N and `host` "{target}"' in counted
    else:
        assert "cannot read this host's earlier sessions" in counted
    reads = " ".join(next(r for r in rules if r.startswith("3.")).split())
    for verb, tool in (("search", "engram_search"), ("load", "engram_load"), ("status", "engram_status")):
        assert f"`{verb}" in reads and f"`{tool}`" in reads
    writes = " ".join(next(r for r in rules if r.startswith("4.")).split())
    assert "without `--force`/`-f`" in writes and "`engram_save" in writes
    assert writes.index("preview") < writes.index("`engram_commit`") and "approve" in writes
    flat = " ".join(said.split())
    assert "Do not run `engram` in the shell" in flat
    assert "Never run any other `engram` command that writes" in flat
    assert "--force" not in flat.replace("`save-session --force`", "").replace("`--force`/`-f`", "")


def test_no_command_file_pre_approves_a_write_for_the_model() -> None:
    """Issue 19: the Claude command's allowed-tools pre-approved `engram save-session --force` for
    the whole /engram turn, and its `--query-level:*` prefix also matched `--force --workspace
    OTHER` (another project's memory). No command file pre-approves any engram write."""
    writes = [
        "engram save-session --force",
        "engram save-session --query-level 5 --force --workspace /other",
        "engram commit TOKEN",
        "engram ss -f",
    ]
    for target, name in FILES:
        text = (GOLDEN / f"{target}.{name}").read_text("utf-8")
        allowed = str(front_matter(text).get("allowed-tools", "")) if text.startswith("---\n") else ""
        for rule in (r.strip() for r in allowed.split(",") if r.strip()):
            assert not any(claude_bash_allows(rule, w) for w in writes), (target, rule)
            assert "commit" not in rule and not rule.startswith("Bash"), (target, rule)


# --- link / unlink / doctor ----------------------------------------------------------------------
def test_a_command_of_the_users_own_is_left_alone_and_force_replaces_it_until_unlink(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SPEC §8: what is not engram's is never overwritten or removed without --force; link then
    unlink gives back the original bytes."""
    theirs = ws / ".claude" / "commands" / "engram.md"
    theirs.parent.mkdir(parents=True)
    theirs.write_bytes(b"My own /engram: print the engine RAM.\n")
    rc, env = run_json(capsys, "link", "claude")
    assert rc == 0
    [row] = [r for r in env["data"]["results"] if r["file"] == "./.claude/commands/engram.md"]
    assert row["action"] == "skipped" and "--force" in row["message"]
    assert theirs.read_bytes() == b"My own /engram: print the engine RAM.\n"
    rc, env = run_json(capsys, "unlink", "claude")
    assert rc == 0 and theirs.read_bytes() == b"My own /engram: print the engine RAM.\n"
    rc, _ = run_json(capsys, "link", "claude", "--force")
    assert rc == 0 and MARK in theirs.read_text()
    rc, _ = run_json(capsys, "unlink", "claude")
    assert rc == 0 and theirs.read_bytes() == b"My own /engram: print the engine RAM.\n"
    assert sorted(p.name for p in theirs.parent.iterdir()) == ["engram.md"]


def test_dry_run_shows_the_command_and_writes_nothing(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "link", "gemini", "--dry-run")
    assert rc == 0 and "+++ ./.gemini/commands/engram.toml" in out and "+prompt = '''" in out
    assert not (ws / ".gemini").exists()


def steps(envelope: dict) -> list[tuple[str, str, str]]:
    return [(f["code"], f["file"], f["fix"]) for f in envelope["data"]["steps"]]


@pytest.mark.parametrize("target", HOSTS_WITH_COMMANDS)
def test_doctor_reports_a_missing_then_a_stale_command_with_the_link_fix(
    target: str, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """engram's own codes: host.command_missing / host.command_stale (informational, exit 0),
    each with the fix `engram link <host>`; `engram upgrade` refreshes a stale one."""
    assert run_json(capsys, "link", target)[0] == 0
    [first, *_] = command_files(target, False, ws)
    rc, env = run_json(capsys, "doctor")
    assert not [s for s in steps(env) if s[0].startswith("host.command")]
    first.path.write_text(first.text.replace("save-session", "save-sesion"), "utf-8")
    rc, env = run_json(capsys, "doctor")
    assert rc == 0
    assert ("host.command_stale", first.shown, f"run `engram link {target}`") in steps(env)
    rc, out, _ = run(capsys, "doctor")
    assert f"host.command_stale  {first.shown}:" in out and f"Next: run `engram link {target}`" in out
    assert run_json(capsys, "upgrade")[0] == 0
    assert first.path.read_text("utf-8") == first.text
    first.path.unlink()
    rc, env = run_json(capsys, "doctor")
    assert ("host.command_missing", first.shown, f"run `engram link {target}`") in steps(env)
    assert run_json(capsys, "link", target)[0] == 0
    assert first.path.read_text("utf-8") == first.text


def test_doctor_checks_the_global_command_beside_a_global_entry(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_json(capsys, "link", "gemini", "--global")[0] == 0
    command = private_home / ".gemini" / "commands" / "engram.toml"
    command.unlink()
    rc, env = run_json(capsys, "doctor")
    assert (
        "host.command_missing",
        "~/.gemini/commands/engram.toml",
        "run `engram link gemini --global`",
    ) in steps(env)


def test_the_command_names_this_installations_engram(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """SPEC §8: like the MCP entry, the CLI the command runs is this installation's, never a
    registry download; on PATH it is the bare name."""
    monkeypatch.setattr(slash_commands, "pinned", lambda name: ("/opt/engram env/bin/engram", []))
    assert engram_command() == '"/opt/engram env/bin/engram"'
    [file] = command_files("claude", False, tmp_path)
    assert "engram env" not in front_matter(file.text)["allowed-tools"]
    assert 'Do not run `"/opt/engram env/bin/engram"` in the shell' in " ".join(file.text.split())
