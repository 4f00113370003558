"""Doctor on the editors' agent terminals: each linked editor gets a plain note of what engram
relies on there (its marker) and what keeps its agent asking; a VS Code auto-approve rule that
lets the agent run `engram commit` is a gate left open."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run, run_json
from tests.support.files import write


def test_each_linked_editor_gets_its_note(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["cursor", "--global"], ["vscode"], ["windsurf", "--global"]):
        assert run(capsys, "link", *argv)[0] == 0
    rc, env = run_json(capsys, "doctor")
    notes = {s["file"]: s for s in env["data"]["steps"] if s["code"] == "host.shell_unasked"}
    assert set(notes) == {"cursor", "vscode", "windsurf"}
    assert "CURSOR_AGENT" in notes["cursor"]["message"] and "auto-run" in notes["cursor"]["fix"]
    assert "COPILOT_AGENT" in notes["vscode"]["message"] and "autoApprove" in notes["vscode"]["fix"]
    assert "cascadeCommandsDenyList" in notes["windsurf"]["fix"]
    assert rc == 0  # a note, not a failure


@pytest.mark.parametrize(
    ("rules", "open_"),
    [
        ('{"engram": true}', True),
        ('{"/^engram\\\\b/": true}', True),
        ('{"/.*/": {"approve": true, "matchCommandLine": true}}', True),
        ('{"/.*/": true, "/^engram\\\\b/": false}', False),
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
