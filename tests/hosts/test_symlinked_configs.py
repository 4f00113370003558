"""A host config kept as a symbolic link is edited through its link (SPEC §8, issue 19 item 9).

`engram link cursor` over a symlinked `~/.cursor/mcp.json` (dotfiles) replaced the link with a
file. Now the target's bytes change, the link stays, the backup is a plain copy under
$ENGRAM_HOME (issue 22; it was a `.bak` beside the link), and a link that points nowhere, or out
of the workspace, is refused with a message.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engram_mcp.hosts.edits import backup_path
from tests.support.cli import run, run_json
from tests.support.host_configs import parse_jsonc

ORIGINAL = (
    '{\n  // my servers, kept in dotfiles\n  "mcpServers": {\n    "github": {"command": "gh-mcp"}\n  }\n}\n'
)


def _dotfile(home: Path, text: str = ORIGINAL) -> tuple[Path, Path]:
    """~/dotfiles/cursor-mcp.json and the link ~/.cursor/mcp.json pointing at it."""
    target = home / "dotfiles" / "cursor-mcp.json"
    target.parent.mkdir(parents=True)
    target.write_text(text, "utf-8")
    target.chmod(0o640)
    link = home / ".cursor" / "mcp.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    return target, link


def test_link_edits_a_symlinked_global_config_through_its_link(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 19: the link stays, its target gets engram's entry (mode kept), the dotfiles folder
    gets no backup or temp file, link twice changes nothing, unlink restores the target's bytes."""
    target, link = _dotfile(private_home)
    rc, out, err = run(capsys, "link", "cursor", "--global")
    assert rc == 0, out + err
    assert link.is_symlink() and os.readlink(link) == str(target)
    data = parse_jsonc(target.read_text("utf-8"))
    assert list(data["mcpServers"]) == ["github", "engram"]
    assert target.read_text("utf-8").startswith("{\n  // my servers, kept in dotfiles\n")
    assert (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["cursor-mcp.json"]
    assert not link.with_name("mcp.json.bak").exists(), "backups live under $ENGRAM_HOME (issue 22)"
    backup = backup_path(link)
    assert not backup.is_symlink() and backup.read_text("utf-8") == ORIGINAL
    linked = target.read_bytes()
    rc, env = run_json(capsys, "link", "cursor", "--global")
    assert rc == 0 and env["data"]["results"][0]["action"] == "unchanged"
    assert target.read_bytes() == linked
    rc, out, err = run(capsys, "unlink", "cursor", "--global")
    assert rc == 0, out + err
    assert link.is_symlink() and target.read_text("utf-8") == ORIGINAL
    assert "restored" in out and not backup.exists()


def test_a_dangling_link_is_refused_with_a_message_and_left_as_it_is(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 19: a link whose target is missing is named, not replaced by a file."""
    link = private_home / ".cursor" / "mcp.json"
    link.parent.mkdir(parents=True)
    missing = private_home / "dotfiles" / "gone.json"
    link.symlink_to(missing)
    rc, env = run_json(capsys, "link", "cursor", "--global")
    assert rc == 1
    [row] = [r for r in env["data"]["results"] if r["file"] == "~/.cursor/mcp.json"]
    assert row["action"] == "error"
    assert "symbolic link" in row["message"] and "does not exist" in row["message"]
    assert str(missing) in row["message"]
    assert link.is_symlink() and not missing.exists()
    assert sorted(p.name for p in link.parent.iterdir()) == ["mcp.json"]


def test_a_workspace_link_out_of_the_workspace_is_refused(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """engram's choice: a repository's `.cursor/mcp.json -> ~/some/app.json` must not make
    `engram link cursor` write into a file of the user's outside the workspace."""
    victim = private_home / "app" / "settings.json"
    victim.parent.mkdir(parents=True)
    victim.write_text('{"theme": "dark"}\n', "utf-8")
    link = ws / ".cursor" / "mcp.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(victim)
    rc, env = run_json(capsys, "link", "cursor")
    assert rc == 1
    row = env["data"]["results"][0]
    assert row["action"] == "error" and "outside this workspace" in row["message"]
    assert victim.read_text("utf-8") == '{"theme": "dark"}\n' and link.is_symlink()
    assert not (ws / ".cursor" / "commands").exists()


def test_a_workspace_link_inside_the_workspace_is_edited_through_it(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ws / "config" / "claude-settings.json"
    target.parent.mkdir()
    target.write_text('{\n  "env": {"FOO": "1"}\n}\n', "utf-8")
    link = ws / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(Path("..") / "config" / "claude-settings.json")
    rc, out, err = run(capsys, "link", "claude")
    assert rc == 0, out + err
    assert link.is_symlink()
    settings = json.loads(target.read_text("utf-8"))
    assert settings["env"] == {"FOO": "1"}
    assert "Bash(engram commit *)" in settings["permissions"]["ask"]
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"].endswith("hook session-start")
    rc, out, err = run(capsys, "unlink", "claude")
    assert rc == 0, out + err
    assert link.is_symlink() and target.read_text("utf-8") == '{\n  "env": {"FOO": "1"}\n}\n'
