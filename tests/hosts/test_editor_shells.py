"""The editors' agent terminals: `link vscode` writes the rule that makes VS Code's agent ask
before any engram command, and unlink gives the settings file back byte for byte; each linked
editor without such a rule gets a plain note of what engram relies on there (its marker) and
what keeps its agent asking; an approving rule (VS Code's auto-approve, Cursor's allowlist file)
that lets the agent run `engram commit` is a gate left open."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_mcp.hosts.formats import jsonc
from engram_mcp.hosts.gate import editor_shells, gate_rules
from tests.support.cli import run, run_json
from tests.support.files import write


def test_each_linked_editor_gets_its_note(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["cursor", "--global"], ["vscode"], ["windsurf", "--global"]):
        assert run(capsys, "link", *argv)[0] == 0
    rc, env = run_json(capsys, "doctor")
    notes = {s["file"]: s for s in env["data"]["steps"] if s["code"] == "host.shell_unasked"}
    assert set(notes) == {"cursor", "windsurf"}  # vscode's link wrote its ask rule
    assert "CURSOR_AGENT" in notes["cursor"]["message"] and "auto-run" in notes["cursor"]["fix"]
    assert "cascadeCommandsDenyList" in notes["windsurf"]["fix"]
    assert rc == 0  # a note, not a failure
    (ws / ".vscode" / "settings.json").unlink()  # the rule gone: vscode is noted too
    rc, env = run_json(capsys, "doctor")
    notes = {s["file"]: s for s in env["data"]["steps"] if s["code"] == "host.shell_unasked"}
    assert "COPILOT_AGENT" in notes["vscode"]["message"] and "link vscode" in notes["vscode"]["fix"]


SETTINGS = (
    '{\n  // mine\n  "editor.tabSize": 4,\n  "chat.tools.terminal.autoApprove": {"npm test": true}\n}\n'
)


@pytest.mark.parametrize("global_", [False, True])
def test_link_vscode_writes_the_ask_rule_and_unlink_restores_the_settings(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str], global_: bool
) -> None:
    settings = (private_home / ".config" / "Code" / "User" if global_ else ws / ".vscode") / "settings.json"
    write(settings, SETTINGS)
    scope = ["--global"] if global_ else []
    assert run(capsys, "link", "vscode", *scope)[0] == 0
    text = settings.read_text()
    assert "// mine" in text and '"npm test": true' in text
    rules = jsonc.loads(text)["chat.tools.terminal.autoApprove"]
    assert rules[gate_rules.VSCODE_RULE] is False
    for command in ("engram commit T --approve all", "env -u COPILOT_AGENT engram add x", "engram-mcp"):
        assert editor_shells._matches(gate_rules.VSCODE_RULE, command), command
    assert not editor_shells._matches(gate_rules.VSCODE_RULE, "cat .engram/memories/a.md")
    assert run(capsys, "link", "vscode", *scope)[0] == 0 and settings.read_text() == text  # once
    assert run(capsys, "unlink", "vscode", *scope)[0] == 0
    assert settings.read_text() == SETTINGS


def test_a_vscode_settings_file_it_cannot_take_is_left_untouched(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = '{"chat.tools.terminal.autoApprove": ["engram"]}\n'
    write(ws / ".vscode" / "settings.json", bad)
    rc, out, err = run(capsys, "link", "vscode")
    assert "not an object" in out + err and "left untouched" in out + err
    assert (ws / ".vscode" / "settings.json").read_text() == bad
    assert rc != 0


@pytest.mark.parametrize(
    ("entries", "open_"), [('["engram"]', True), ('["*"]', True), ('["git status"]', False)]
)
def test_a_cursor_allowlist_entry_that_runs_engram_commit_is_a_gate_left_open(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str], entries: str, open_: bool
) -> None:
    write(private_home / ".cursor" / "permissions.json", f'{{"terminalAllowlist": {entries}}}\n')
    rc, env = run_json(capsys, "doctor")
    opened = [f for f in env["data"]["findings"] if f["code"] == "host.gate_open"]
    assert bool(opened) is open_, opened
    assert rc == (1 if open_ else 0)


@pytest.mark.parametrize(
    ("rules", "open_"),
    [
        ('{"engram": true}', True),
        ('{"/^engram\\\\b/": true}', True),
        ('{"/.*/": {"approve": true, "matchCommandLine": true}}', True),
        ('{"/.*/": true, "/^engram\\\\b/": false}', True),  # runs `bash run.sh`, and so anything
        ('{"/^engram commit \\\\S+$/": true}', True),  # the plain commit, no flags
        ('{"/^(?<c>engram) commit/": true}', True),  # JavaScript's named group
        ('{"/^eng[^]am commit/": true}', True),  # JavaScript's any-character class
        ('{"bash": true, "/\\\\bengram(?!\\\\/)/i": false}', True),
        ('{"python3": true}', True),
        ('{"npm run": true, "/\\\\bengram(?!\\\\/)/i": false}', True),  # a package's script
        ('{"pytest": true}', True),  # a conftest.py the agent writes
        ('{"flock": true}', True),
        ('{"/^\\\\.\\\\/\\\\S+/": true}', True),  # any script by its path
        ('{"git status": true, "ls": true, "cat": true}', False),
        ('{"npm test": true, "/\\\\bengram(?!\\\\/)/i": false}', True),  # package.json's test script
        ('{"git status": true, "ls": true}', False),
    ],
)
def test_a_vscode_rule_that_approves_engram_commit_is_a_gate_left_open(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str], rules: str, open_: bool
) -> None:
    assert run(capsys, "link", "vscode")[0] == 0
    write(
        ws / ".vscode" / "settings.json", f'{{\n  // mine\n  "chat.tools.terminal.autoApprove": {rules}\n}}\n'
    )
    rc, env = run_json(capsys, "doctor")
    opened = [f for f in env["data"]["findings"] if f["code"] == "host.gate_open"]
    assert bool(opened) is open_, opened
    assert rc == (1 if open_ else 0)


@pytest.mark.parametrize(
    "where",
    [
        ".config/Code/User/profiles/4a1f/settings.json",
        ".config/Code - Insiders/User/settings.json",
        ".config/VSCodium/User/settings.json",
        ".config/Code - OSS/User/settings.json",
        ".vscode-server/data/Machine/settings.json",
        ".vscode-server/data/User/settings.json",
        ".var/app/com.visualstudio.code/config/Code/User/settings.json",
    ],
)
def test_every_vscode_settings_file_is_read(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    write(private_home / where, '{"chat.tools.terminal.autoApprove": {"engram": true}}\n')
    rc, env = run_json(capsys, "doctor")
    assert [f["file"] for f in env["data"]["findings"] if f["code"] == "host.gate_open"] == [f"~/{where}"]
    write(private_home / where, '{"chat.tools.global.autoApprove": true}\n')
    rc, env = run_json(capsys, "doctor")
    assert any(f["code"] == "host.gate_open" for f in env["data"]["findings"]) and rc == 1


def test_a_code_workspace_files_settings_are_read(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        ws / "team.code-workspace",
        '{"folders": [{"path": "."}], "settings": {"chat.tools.terminal.autoApprove": {"sh": true}}}\n',
    )
    rc, env = run_json(capsys, "doctor")
    assert [f["file"] for f in env["data"]["findings"] if f["code"] == "host.gate_open"] == [
        "./team.code-workspace"
    ]


@pytest.mark.parametrize(
    "where", ["team.code-workspace", ".vscode/team.code-workspace", "../team.code-workspace"]
)
def test_code_workspace_files_beside_the_project_are_read(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    for n in range(25):  # decoys do not hide the one that approves
        write(ws / f"decoy-{n:02}.code-workspace", '{"folders": [], "settings": {}}\n')
    write(ws / where, '{"settings": {"chat.tools.terminal.autoApprove": {"sh": true}}}\n')
    rc, env = run_json(capsys, "doctor")
    assert rc == 1 and any(f["code"] == "host.gate_open" for f in env["data"]["findings"])


def test_the_ask_rule_in_a_code_workspace_counts_as_written(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rule may live in a .code-workspace's settings: VS Code applies it there too."""
    assert run(capsys, "link", "vscode")[0] == 0
    (ws / ".vscode" / "settings.json").unlink()
    write(
        ws / "team.code-workspace",
        '{"settings": {"chat.tools.terminal.autoApprove": {"/\\\\bengram(?!\\\\/)/i": false}}}\n',
    )
    rc, env = run_json(capsys, "doctor")
    assert "vscode" not in {s["file"] for s in env["data"]["steps"] if s["code"] == "host.shell_unasked"}
