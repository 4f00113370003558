"""Acceptance: `engram link` installs engram's session start in every host that has one (Codex
0.171: `SessionStart` in `.codex/hooks.json`; Gemini CLI 0.61: `hooks.SessionStart` in
`.gemini/settings.json`; opencode 1.18: a plugin in `.opencode/plugins/`), as Claude Code's:
the bare `engram`, idempotent, removed by unlink with the user's own hooks kept byte for byte,
reported by doctor when missing, and a malformed file refused with its code, untouched.

The CLI runs in-process; HOME is a temp dir (tests/conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.hosts.link.hook_plugin import MARK, render
from tests.support.cli import run, run_json
from tests.support.files import write
from tests.support.host_configs import parse_jsonc
from tests.support.snapshots import tree_state

CODEX_GROUP = {
    "matcher": "startup|resume|clear|compact",
    "hooks": [{"type": "command", "command": "engram hook session-start --host codex", "timeout": 30}],
}
GEMINI_GROUP = {
    "hooks": [
        {
            "name": "engram-session-start",
            "type": "command",
            "command": "engram hook session-start --host gemini",
            "timeout": 30000,
        }
    ]
}
THEIR_HOOK = {"matcher": "startup", "hooks": [{"type": "command", "command": "./scripts/motd.sh"}]}

CODEX_HOOKS = """{
  // the team's own hooks
  "hooks": {
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "./scripts/motd.sh"}]},
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "./scripts/lint.sh", "timeout": 60}]}]
  }
}
"""
GEMINI_SETTINGS = """{
\t"general": {"vimMode": true},
\t"hooks": {
\t\t/* ours */
\t\t"SessionStart": [
\t\t\t{"matcher": "startup", "hooks": [{"type": "command", "command": "./scripts/motd.sh"}]}
\t\t],
\t\t"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]}]
\t}
}
"""


def actions(envelope: dict[str, Any]) -> dict[str, str]:
    return {r["file"].removeprefix("./"): r["action"] for r in envelope["data"]["results"]}


def codes(envelope: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["code"], f["file"].removeprefix("./")) for f in envelope["data"]["findings"]]


def _json(path: Path) -> Any:
    return parse_jsonc(path.read_text("utf-8"))


# --- link, re-link, unlink ---------------------------------------------------------------------
def test_codex_link_writes_the_hook_relink_keeps_it_unlink_removes_the_file(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, env = run_json(capsys, "link", "codex")
    assert rc == 0, env
    hooks = ws / ".codex" / "hooks.json"
    assert actions(env)[".codex/hooks.json"] == "added"
    assert json.loads(hooks.read_text("utf-8")) == {"hooks": {"SessionStart": [CODEX_GROUP]}}
    [step] = [r["step"] for r in env["data"]["results"] if r["step"]]
    assert "Hooks need review" in step and "/hooks" in step, "Codex runs it only once trusted"
    linked = hooks.read_bytes()

    rc, env = run_json(capsys, "link", "codex")
    assert rc == 0 and set(actions(env).values()) == {"unchanged"}
    assert hooks.read_bytes() == linked
    assert not any("Hooks need review" in r["step"] for r in env["data"]["results"])

    rc, env = run_json(capsys, "unlink", "codex")
    assert rc == 0, env
    assert actions(env)[".codex/hooks.json"] == "removed"
    assert not hooks.exists() and not (ws / ".codex").exists()


def test_codex_unlink_keeps_the_users_hooks_byte_for_byte(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = write(ws / ".codex" / "hooks.json", CODEX_HOOKS)
    before = tree_state(ws, private_home, dirs=False)
    rc, env = run_json(capsys, "link", "codex")
    assert rc == 0 and actions(env)[".codex/hooks.json"] == "added"
    data = _json(hooks)
    assert data["hooks"]["SessionStart"] == [THEIR_HOOK, CODEX_GROUP]
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "./scripts/lint.sh"
    assert "// the team's own hooks" in hooks.read_text("utf-8")
    rc, env = run_json(capsys, "unlink", "codex")
    assert rc == 0 and actions(env)[".codex/hooks.json"] == "restored"
    assert hooks.read_text("utf-8") == CODEX_HOOKS
    assert tree_state(ws, private_home, dirs=False) == before


def test_gemini_link_puts_the_hook_beside_the_entry_and_unlink_keeps_the_users_hooks(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = write(ws / ".gemini" / "settings.json", GEMINI_SETTINGS)
    rc, env = run_json(capsys, "link", "gemini")
    assert rc == 0, env
    [line] = [r for r in env["data"]["results"] if r["file"] == "./.gemini/settings.json"]
    assert line["action"] == "added" and "SessionStart hook" in line["message"]
    data = _json(settings)
    assert data["hooks"]["SessionStart"] == [THEIR_HOOK, GEMINI_GROUP]
    assert data["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./guard.sh"
    assert data["mcpServers"]["engram"]["command"] == "engram-mcp"
    linked = settings.read_bytes()

    rc, env = run_json(capsys, "link", "gemini")
    assert rc == 0 and set(actions(env).values()) == {"unchanged"}
    assert settings.read_bytes() == linked

    rc, env = run_json(capsys, "unlink", "gemini")
    assert rc == 0 and actions(env)[".gemini/settings.json"] == "restored"
    assert settings.read_text("utf-8") == GEMINI_SETTINGS


def test_gemini_link_of_a_new_file_and_unlink_leave_nothing(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, _ = run(capsys, "link", "gemini")
    assert rc == 0
    settings = ws / ".gemini" / "settings.json"
    assert json.loads(settings.read_text("utf-8"))["hooks"] == {"SessionStart": [GEMINI_GROUP]}
    rc, _, _ = run(capsys, "unlink", "gemini")
    assert rc == 0 and not settings.exists()


def test_a_global_link_installs_no_session_start(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user-level hook would load engram into every project's session, engram's or not."""
    for target in ("codex", "gemini", "opencode"):
        rc, out, err = run(capsys, "link", target, "--global")
        assert rc == 0, out + err
    assert "hooks" not in json.loads((private_home / ".gemini" / "settings.json").read_text("utf-8"))
    assert not (private_home / ".codex" / "hooks.json").exists()
    assert not list(private_home.rglob("engram.js"))


def test_opencode_link_writes_the_plugin_relink_keeps_it_unlink_removes_it(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, env = run_json(capsys, "link", "opencode")
    assert rc == 0, env
    plugin = ws / ".opencode" / "plugins" / "engram.js"
    assert actions(env)[".opencode/plugins/engram.js"] == "added"
    text = plugin.read_text("utf-8")
    assert text == render("engram", []) and MARK in text
    assert 'const ENGRAM = ["engram", "hook", "session-start"]' in text
    assert '"experimental.chat.system.transform"' in text and "execFile(" in text

    rc, env = run_json(capsys, "link", "opencode")
    assert rc == 0 and set(actions(env).values()) == {"unchanged"}

    rc, env = run_json(capsys, "unlink", "opencode")
    assert rc == 0 and actions(env)[".opencode/plugins/engram.js"] == "removed"
    assert not (ws / ".opencode").exists()


def test_opencode_leaves_a_plugin_of_that_name_that_is_not_engrams(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = write(ws / ".opencode" / "plugins" / "engram.js", "export const Mine = async () => ({})\n")
    rc, env = run_json(capsys, "link", "opencode")
    assert rc == 0 and actions(env)[".opencode/plugins/engram.js"] == "skipped"
    assert theirs.read_text("utf-8") == "export const Mine = async () => ({})\n"
    rc, env = run_json(capsys, "link", "opencode", "--force")
    assert rc == 0 and MARK in theirs.read_text("utf-8")
    rc, env = run_json(capsys, "unlink", "opencode")
    assert rc == 0 and actions(env)[".opencode/plugins/engram.js"] == "restored"
    assert theirs.read_text("utf-8") == "export const Mine = async () => ({})\n"


# --- doctor --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "file"),
    [
        ("codex", ".codex/hooks.json"),
        ("gemini", ".gemini/settings.json"),
        ("opencode", ".opencode/plugins/engram.js"),
    ],
)
def test_doctor_reports_a_missing_session_start_with_its_file_and_fix(
    target: str, file: str, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run(capsys, "link", target)
    assert rc == 0, out + err
    rc, env = run_json(capsys, "doctor")
    assert not [c for c in codes(env) if c[0].startswith("host.hook")], env
    if target == "gemini":
        settings = ws / file
        data = json.loads(settings.read_text("utf-8"))
        del data["hooks"]
        settings.write_text(json.dumps(data), "utf-8")
    else:
        (ws / file).unlink()
    rc, env = run_json(capsys, "doctor")
    assert rc == 1
    [finding] = [f for f in env["data"]["findings"] if f["code"] == "host.hook_missing"]
    assert finding["file"].removeprefix("./") == file
    assert finding["fix"] == f"run `engram link {target}`"
    rc, out, err = run(capsys, "link", target)
    assert rc == 0, out + err
    rc, env = run_json(capsys, "doctor")
    assert "host.hook_missing" not in [c for c, _ in codes(env)]


def test_doctor_reports_a_hook_that_runs_engram_by_a_path_and_upgrade_writes_the_bare_name(
    ws: Path, engram_on_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for target in ("codex", "opencode"):
        rc, out, err = run(capsys, "link", target)
        assert rc == 0, out + err
    here = str(engram_on_path / "engram")
    hooks = ws / ".codex" / "hooks.json"
    hooks.write_text(hooks.read_text("utf-8").replace('"engram hook', f'"{here} hook'), "utf-8")
    plugin = ws / ".opencode" / "plugins" / "engram.js"
    plugin.write_text(render(here, []), "utf-8")
    rc, env = run_json(capsys, "doctor")
    assert rc == 1
    assert ("host.not_portable", ".codex/hooks.json") in codes(env)
    assert ("host.not_portable", ".opencode/plugins/engram.js") in codes(env)
    rc, out, err = run(capsys, "upgrade")
    assert rc == 0, out + err
    assert json.loads(hooks.read_text("utf-8")) == {"hooks": {"SessionStart": [CODEX_GROUP]}}
    assert plugin.read_text("utf-8") == render("engram", [])


def test_doctor_reports_a_plugin_another_version_wrote(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, _ = run(capsys, "link", "opencode")
    assert rc == 0
    plugin = ws / ".opencode" / "plugins" / "engram.js"
    plugin.write_text(plugin.read_text("utf-8").replace("30000", "5000"), "utf-8")
    rc, env = run_json(capsys, "doctor")
    assert rc == 1 and ("host.hook_stale", ".opencode/plugins/engram.js") in codes(env)


# --- hostile files -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "file", "text"),
    [
        ("codex", ".codex/hooks.json", '{"hooks": {"SessionStart": [\n'),
        ("codex", ".codex/hooks.json", '{"hooks": {"SessionStart": {"matcher": "startup"}}}\n'),
        ("codex", ".codex/hooks.json", '{"hooks": ["SessionStart"]}\n'),
        ("gemini", ".gemini/settings.json", '{"hooks": {"SessionStart": "engram"}}\n'),
        ("gemini", ".gemini/settings.json", '{"hooks": 7}\n'),
    ],
)
def test_a_malformed_hook_file_is_refused_with_its_code_and_left_untouched(
    target: str, file: str, text: str, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(ws / file, text)
    rc, env = run_json(capsys, "link", target)
    assert rc == 1, env
    [line] = [r for r in env["data"]["results"] if r["file"].removeprefix("./") == file]
    assert line["action"] == "error" and line["code"] == "ENGRAM_HOST_PARSE", line
    assert "left untouched" in line["message"] and "line " in line["message"]
    assert path.read_text("utf-8") == text
