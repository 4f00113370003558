"""`engram link` writes each host's own rule that asks before the agent's shell runs engram's CLI
writes (SPEC §7 "CLI writes are the human's", §8; issue 19 item 5).

With real Codex in a trusted project the model ran `engram commit TOKEN` through its shell and
the memory was written; so did opencode through `bash`. Each test pins the exact rule text link
writes, checks it with the host's own matching (re-implemented here from its docs and source),
and that unlink takes away exactly what link added.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from engram_mcp.hosts.gate.shell_rules import OPENCODE_OTHER_SPELLINGS
from tests.support.cli import run, run_json
from tests.support.host_configs import parse_jsonc
from tests.support.host_rules import claude_bash_allows, gemini_policy_decision, opencode_bash_decision
from tests.support.snapshots import tree_state

WRITES = (
    "commit",
    "save-session",
    "ss",
    "add",
    "edit",
    "forget",
    "restore",
    "verify",
    "pending",
    "promote",
    "note",
    "gc",
    "init",
    "link",
    "unlink",
    "upgrade",
)
"""SPEC §7's writing commands, plus those that change a host's gate (link, unlink, upgrade)."""
ATTEMPTS = (
    "commit 0123abcd --approve all",
    "save-session --force",
    "ss -f",
    "save-session --query-level 5 --force --workspace /other",
    "add --type rule --title t",
    "verify --accept",
    "pending --cancel 1",
    "--json commit 0123abcd",
    "--workspace=/other commit 0123abcd",
)
READS = ("search uv", "load", "status", "list", "show some-id")


def _pin(hook_command: str) -> str:
    """How link spelled engram in the hook it wrote (bare name, or this installation's path)."""
    return hook_command.removesuffix(" hook session-start")


def _spellings(pin: str) -> list[str]:
    return ["engram"] + ([pin] if pin != "engram" else [])


def _server(pin: str) -> list[str]:
    """The server's spellings, from engram's: an agent that starts `engram-mcp` in its shell is
    its client and can write through it with no host in between."""
    return ["engram-mcp"] + ([str(Path(pin).with_name("engram-mcp"))] if pin != "engram" else [])


# --- Claude Code -----------------------------------------------------------------------------------
def test_claude_link_adds_ask_rules_for_every_engram_write_and_unlink_takes_them_away(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run(capsys, "link", "claude")
    assert rc == 0, out + err
    settings = json.loads((ws / ".claude" / "settings.json").read_text("utf-8"))
    pin = _pin(settings["hooks"]["SessionStart"][0]["hooks"][0]["command"])
    expected = [
        rule
        for spelling in _spellings(pin)
        for rule in [*(f"Bash({spelling} {write} *)" for write in WRITES), f"Bash({spelling} -*)"]
    ]
    expected += [rule for server in _server(pin) for rule in (f"Bash({server})", f"Bash({server} *)")]
    assert settings["permissions"] == {"ask": expected}
    for server in _server(pin):
        assert any(claude_bash_allows(r, server) for r in expected)
        assert any(claude_bash_allows(r, f"{server} --no-elicitation") for r in expected)
    for spelling in _spellings(pin):
        for attempt in ATTEMPTS:
            assert any(claude_bash_allows(r, f"{spelling} {attempt}") for r in expected), attempt
        for read in READS:
            assert not any(claude_bash_allows(r, f"{spelling} {read}") for r in expected), read
    rc, env = run_json(capsys, "link", "claude")
    assert rc == 0 and {r["action"] for r in env["data"]["results"]} == {"unchanged"}
    rc, out, err = run(capsys, "unlink", "claude")
    assert rc == 0, out + err
    assert not (ws / ".claude").exists()


def test_claude_ask_rules_join_the_users_own_and_unlink_gives_back_the_bytes(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = (
        '{\n  "permissions": {\n    "allow": ["Bash(git status)"],\n    "ask": ["Bash(rm:*)"]\n  }\n}\n'
    )
    path = ws / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(original, "utf-8")
    rc, out, err = run(capsys, "link", "claude", "--no-hook")
    assert rc == 0, out + err
    ask = json.loads(path.read_text("utf-8"))["permissions"]["ask"]
    assert ask[0] == "Bash(rm:*)" and "Bash(engram commit *)" in ask and "Bash(engram -*)" in ask
    assert json.loads(path.read_text("utf-8"))["permissions"]["allow"] == ["Bash(git status)"]
    rc, out, err = run(capsys, "unlink", "claude")
    assert rc == 0, out + err
    assert path.read_text("utf-8") == original


def test_claude_global_link_writes_the_ask_rules_to_the_user_settings(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run(capsys, "link", "claude", "--global")
    assert rc == 0, out + err
    ask = json.loads((private_home / ".claude" / "settings.json").read_text("utf-8"))["permissions"]["ask"]
    assert "Bash(engram save-session *)" in ask and "Bash(engram ss *)" in ask
    rc, out, err = run(capsys, "unlink", "claude", "--global")
    assert rc == 0, out + err
    assert not (private_home / ".claude").exists()


# --- opencode --------------------------------------------------------------------------------------
def test_opencode_link_asks_before_bash_runs_engram_writes(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 19: opencode linked as the README said ran `engram commit` through `bash`."""
    rc, out, err = run(capsys, "link", "opencode")
    assert rc == 0, out + err
    config = parse_jsonc((ws / "opencode.json").read_text("utf-8"))
    [command] = config["mcp"]["engram"]["command"]
    pin = str(Path(command).with_name("engram")) if Path(command).is_absolute() else "engram"
    patterns = [
        pattern
        for spelling in _spellings(pin)
        for pattern in [*(f"{spelling} {write} *" for write in WRITES), f"{spelling} -*"]
    ]
    patterns += [p for p in OPENCODE_OTHER_SPELLINGS if p not in patterns]
    assert config["permission"] == {"engram_engram_commit": "ask", "bash": dict.fromkeys(patterns, "ask")}
    for spelling in _spellings(pin):
        for attempt in ATTEMPTS:
            assert opencode_bash_decision(config, f"{spelling} {attempt}") == "ask", attempt
    for read in READS:
        assert opencode_bash_decision(config, f"engram {read}") == "allow", read
    # make hosts-e2e: a model ran engram by another path, or wrapped, and wrote memory unasked
    for evasive in (
        "/home/me/.local/share/engram-venv/bin/engram add rule T B --yes",
        "./.venv/bin/engram save-session --force",
        "env -u OPENCODE -u AGENT engram verify --accept",
        "sh -c 'engram add rule T B --yes'",
        'script -qc "engram commit tok" /dev/null',
        "\\engram add rule T B --yes",
        "python3 -P -m engram_mcp.cli commit tok",
        "engram-mcp",
    ):
        assert opencode_bash_decision(config, evasive) == "ask", evasive
    rc, out, err = run(capsys, "unlink", "opencode")
    assert rc == 0 and not (ws / "opencode.json").exists()


def test_opencode_bash_allow_becomes_star_allow_with_engrams_rules_and_comes_back(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = '{\n  "permission": {\n    "bash": "allow",\n    "edit": "ask"\n  }\n}\n'
    path = ws / "opencode.json"
    path.write_text(original, "utf-8")
    rc, out, err = run(capsys, "link", "opencode")
    assert rc == 0, out + err
    config = parse_jsonc(path.read_text("utf-8"))
    assert list(config["permission"]["bash"].items())[0] == ("*", "allow")
    assert opencode_bash_decision(config, "engram commit 0123") == "ask"
    assert opencode_bash_decision(config, "make test") == "allow"
    assert config["permission"]["edit"] == "ask"
    rc, out, err = run(capsys, "unlink", "opencode")
    assert rc == 0, out + err
    assert path.read_text("utf-8") == original


def test_opencode_rules_go_after_a_users_pattern_that_would_allow_engram(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """opencode's last matching pattern wins: engram's come after the user's `engram *` allow."""
    path = ws / "opencode.json"
    path.write_text('{"permission": {"bash": {"engram commit *": "ask", "engram *": "allow"}}}\n', "utf-8")
    rc, out, err = run(capsys, "link", "opencode")
    assert rc == 0, out + err
    config = parse_jsonc(path.read_text("utf-8"))
    assert opencode_bash_decision(config, "engram commit 0123") == "ask"
    assert opencode_bash_decision(config, "engram search x") == "allow"
    assert list(config["permission"]["bash"])[:1] == ["engram *"]
    rc, env = run_json(capsys, "doctor")
    assert not [f for f in env["data"]["findings"] if f["file"] == "./opencode.json"], env


# --- Codex -----------------------------------------------------------------------------------------
def _codex_rules(text: str) -> list[tuple[list[str], str]]:
    """(pattern, decision) of every prefix_rule in a Starlark rules file (the subset link writes)."""
    found = []
    for body in re.findall(r"prefix_rule\((.*?)\n\)", text, re.DOTALL):
        pattern = json.loads(re.search(r"pattern = (\[.*?\])", body).group(1))  # type: ignore[union-attr]
        decision = re.search(r'decision = "(\w+)"', body).group(1)  # type: ignore[union-attr]
        found.append((pattern, decision))
    return found


@pytest.mark.parametrize("global_", [False, True], ids=["workspace", "global"])
def test_codex_link_writes_a_prompt_rule_for_every_engram_command(
    global_: bool,
    ws: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Codex 0.171 reads `rules/*.rules` from each config layer (`~/.codex`, and `.codex` of a
    trusted project); a prefix rule matches argv literally, so engram asks as a whole: with
    `--workspace=DIR` first, no list of sub-commands would match."""
    before = tree_state(ws, private_home)
    argv = ["link", "codex", *(["--global"] if global_ else [])]
    rc, out, err = run(capsys, *argv)
    assert rc == 0, out + err
    rules = (private_home / ".codex" if global_ else ws / ".codex") / "rules" / "engram.rules"
    text = rules.read_text("utf-8")
    assert text.startswith("# engram:shell-rules installed by `engram link codex`")
    parsed = _codex_rules(text)
    assert parsed[0] == (["engram"], "prompt")
    assert all(decision == "prompt" and len(pattern) in (1, 3) for pattern, decision in parsed)
    assert ["engram-mcp"] in [pattern for pattern, _ in parsed]  # the server, started by the agent
    assert len(parsed) in (2, 4)
    assert 'justification = "engram writes memory only with the human\'s yes"' in text
    rc, env = run_json(capsys, *argv)
    assert rc == 0 and {r["action"] for r in env["data"]["results"]} <= {"unchanged", "updated"}
    assert rules.read_text("utf-8") == text
    rc, out, err = run(capsys, "unlink", "codex", *(["--global"] if global_ else []))
    assert rc == 0, out + err
    assert tree_state(ws, private_home) == before


def test_codex_leaves_a_rules_file_of_the_users_alone(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = ws / ".codex" / "rules" / "engram.rules"
    mine.parent.mkdir(parents=True)
    mine.write_text('prefix_rule(pattern = ["engram"], decision = "allow")\n', "utf-8")
    rc, env = run_json(capsys, "link", "codex")
    assert rc == 1
    [row] = [r for r in env["data"]["results"] if r["file"] == "./.codex/rules/engram.rules"]
    assert row["action"] == "error" and "not engram's" in row["message"]
    assert mine.read_text("utf-8") == 'prefix_rule(pattern = ["engram"], decision = "allow")\n'


# --- Gemini CLI ------------------------------------------------------------------------------------
def test_gemini_policy_file_is_exactly_what_headless_gemini_needs(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gemini 0.61 loads policies from ~/.gemini/policies/ (workspace policies are switched off):
    allow the read and proposal tools, ask for engram_commit and for shell writes."""
    rc, out, err = run(capsys, "link", "gemini")
    assert rc == 0, out + err
    path = private_home / ".gemini" / "policies" / "engram.toml"
    rules = tomllib.loads(path.read_text("utf-8"))["rule"]
    tools = ["engram_load", "engram_route", "engram_search", "engram_status", "engram_verify"]
    assert rules[0] == {
        "mcpName": "engram",
        "toolName": [*tools, "engram_save", "engram_save_session"],
        "decision": "allow",
        "priority": 100,
    }
    assert rules[1] == {
        "mcpName": "engram",
        "toolName": "engram_commit",
        "decision": "ask_user",
        "priority": 950,
    }
    assert rules[2]["toolName"] == "run_shell_command" and rules[2]["decision"] == "ask_user"
    prefixes = rules[2]["commandPrefix"]
    pin = next(
        (p.removesuffix(" commit") for p in prefixes if p.endswith(" commit") and p != "engram commit"), None
    )
    spellings = ["engram"] + ([pin] if pin else [])
    assert prefixes == [f"{s} {w}" for s in spellings for w in WRITES] + _server(pin or "engram")
    assert rules[3]["toolName"] == "run_shell_command" and "commandRegex" in rules[3]
    assert all(r["priority"] <= 999 for r in rules), "Gemini refuses a priority over 999"
    for spelling in spellings:
        for attempt in ATTEMPTS:
            assert gemini_policy_decision(rules, "run_shell_command", f"{spelling} {attempt}") == "ask_user"
        for read in READS:
            assert gemini_policy_decision(rules, "run_shell_command", f"{spelling} {read}") is None
    settings = parse_jsonc((ws / ".gemini" / "settings.json").read_text("utf-8"))
    assert "tools" not in settings, "no deprecated tools.allowed"


def test_upgrade_rewrites_a_stale_rules_file_of_engrams_and_leaves_the_users_alone(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rules name this installation's engram, so `engram upgrade` re-pins them with the entry."""
    assert run(capsys, "link", "codex")[0] == 0
    assert run(capsys, "link", "gemini", "--global")[0] == 0
    codex = ws / ".codex" / "rules" / "engram.rules"
    gemini = private_home / ".gemini" / "policies" / "engram.toml"
    fresh = {codex: codex.read_text("utf-8"), gemini: gemini.read_text("utf-8")}
    for path, text in fresh.items():
        path.write_text(
            text.replace("engram", "/old/install/engram", 3).replace("# /old/install/", "# "), "utf-8"
        )
    theirs = private_home / ".gemini" / "policies" / "mine.toml"
    theirs.write_text('[[rule]]\ntoolName = "glob"\ndecision = "allow"\npriority = 1\n', "utf-8")
    rc, out, err = run(capsys, "upgrade")
    assert rc == 0, out + err
    assert {path: path.read_text("utf-8") for path in fresh} == fresh
    assert theirs.read_text("utf-8").startswith('[[rule]]\ntoolName = "glob"')


@pytest.mark.parametrize(
    "planted",
    ['{"permission": {"engram_engram_commit": "allow"}}', '{"permission": {"bash": {"engram *": "allow"}}}'],
)
@pytest.mark.parametrize("name", ["opencode.jsonc", "opencode.json"])
def test_a_cloned_dot_opencode_config_that_opens_the_gate_fails_doctor(
    ws: Path,
    capsys: pytest.CaptureFixture[str],
    planted: str,
    name: str,
) -> None:
    """opencode merges `.opencode/opencode.json[c]` after the project's own file: a clone that
    carries one allowing the commit or engram's shell writes overrides what link wrote (a
    review finding: real opencode then ran engram_commit unasked, and doctor said OK)."""
    rc, out, err = run(capsys, "link", "opencode")
    assert rc == 0, out + err
    rc, env = run_json(capsys, "doctor")
    assert rc == 0, env
    (ws / ".opencode").mkdir(exist_ok=True)
    (ws / ".opencode" / name).write_text(planted, "utf-8")
    rc, env = run_json(capsys, "doctor")
    assert rc == 1
    assert any(
        f["code"] == "host.gate_open" and f["file"].endswith(f".opencode/{name}")
        for f in env["data"]["findings"]
    )


def test_doctor_says_when_opencode_still_runs_every_other_command_unasked(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A review finding: with link's rules, an agent that hides engram's name (`E=engr;
    ${E}am-mcp`, base64, a script) still wrote memory through opencode's default bash. Only
    opencode asking first closes that; doctor says so, without failing."""
    assert run(capsys, "link", "opencode")[0] == 0
    rc, env = run_json(capsys, "doctor")
    assert rc == 0
    [note] = [s for s in env["data"]["steps"] if s["code"] == "host.shell_open"]
    assert note["file"] == "./opencode.json" and '"*": "ask"' in note["fix"]
    path = ws / "opencode.json"
    config = json.loads(path.read_text("utf-8"))
    config["permission"]["bash"] = {"*": "ask", **config["permission"]["bash"]}
    path.write_text(json.dumps(config), "utf-8")
    rc, env = run_json(capsys, "doctor")
    assert rc == 0 and not [s for s in env["data"]["steps"] if s["code"] == "host.shell_open"]


def test_every_cli_command_that_writes_is_among_the_commands_the_rules_ask_for() -> None:
    """The hosts' ask rules and the CLI name the write commands in one list: every command the
    CLI registers as writing (with its aliases), and the commands that change a host's gate,
    are in shell_rules.WRITE_COMMANDS. `import` and `ui` write no memory of themselves: import
    proposes, and the page started from an agent's shell approves nothing."""
    import argparse

    from engram_mcp.cli.commands import build_parser
    from engram_mcp.hosts.gate.shell_rules import WRITE_COMMANDS

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    writing = {name for name, parser in sub.choices.items() if parser.get_default("writing")}
    assert writing - {"import", "ui"} <= set(WRITE_COMMANDS)
    assert {"link", "unlink", "upgrade"} <= set(WRITE_COMMANDS) and {"link", "unlink", "upgrade"} <= set(
        sub.choices
    )
    assert set(WRITE_COMMANDS) <= set(sub.choices)  # no rule for a command that is not there
