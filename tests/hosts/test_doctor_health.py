"""`engram doctor` is one health check (issue 22): the hosts' findings and the store's
(engram_mcp.hosts.doctor.health) in one list and one exit code, informational notes apart; and it works
outside any project, on the user's own host files and $ENGRAM_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli.main import main

SCRIPTS = Path(sysconfig.get_path("scripts"))


@pytest.fixture(autouse=True)
def made_home(engram_home: Path) -> Path:
    """$ENGRAM_HOME exists, as after engram's first run (doctor reports a missing one)."""
    engram_home.mkdir(parents=True)
    return engram_home


def doctor(capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["doctor", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_doctor_outside_any_project_checks_only_the_users_own_files(
    tmp_path: Path, private_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / ".mcp.json").write_text('{"mcpServers": {"engram": {"command": "/nowhere/engram-mcp"}}}\n')
    monkeypatch.chdir(folder)
    code, env = doctor(capsys)
    assert code == 0, env
    assert env["data"]["workspace"] is False and env["data"]["linked"] == []
    capsys.readouterr()
    assert main(["doctor"]) == 0
    assert "no project here" in capsys.readouterr().out
    (private_home / ".cursor").mkdir()
    (private_home / ".cursor" / "mcp.json").write_text(
        '{"mcpServers": {"engram": {"command": "/nowhere/engram-mcp", "args": []}}}\n'
    )
    code, env = doctor(capsys)
    assert code == 1
    assert [(f["code"], f["file"]) for f in env["data"]["findings"]] == [
        ("host.command_missing", "~/.cursor/mcp.json")
    ]


def test_doctor_fails_on_the_stores_findings_and_lists_its_notes_without_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / ".engram").mkdir(parents=True)
    monkeypatch.chdir(project)
    monkeypatch.setenv("PATH", os.pathsep.join([str(SCRIPTS), "/usr/bin", "/bin"]))
    code, env = doctor(capsys)
    assert code == 0, env
    assert [s["code"] for s in env["data"]["steps"]] == ["workspace.outside_git"]
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".engram" / "config.json").write_text('{"load": {"budget_tokens": 3000,},}\n')
    code, env = doctor(capsys)
    assert code == 1 and env["data"]["ok"] is False
    assert [f["code"] for f in env["data"]["findings"]] == ["config.ignored"]
    assert env["data"]["steps"] == []
