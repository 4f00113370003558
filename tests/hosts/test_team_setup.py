"""Acceptance: a team's setup across hosts (SPEC §8) — what a teammate's clone needs beyond the
committed files, what `engram link` says (each file, then its `next:` line last), and
`engram link all` / `engram unlink all`.

HOME is a temp dir (tests/conftest.py); a teammate is a second fresh HOME on the same clone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.hosts.targets import TARGETS
from tests.support.cli import run, run_json
from tests.support.snapshots import tree_state

TEAM = ("claude", "codex", "gemini", "opencode")
POLICY = "~/.gemini/policies/engram.toml"
MISSING = "host.gate_file_missing"
WORKSPACE_FILES = {
    "claude": ".mcp.json",
    "codex": ".codex/config.toml",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/mcp.json",
    "opencode": "opencode.json",
    "vscode": ".vscode/mcp.json",
}
GLOBAL_ONLY = ("antigravity", "windsurf", "claude-desktop")


def teammate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A second person on the same clone: their own HOME and $ENGRAM_HOME, nothing linked."""
    home = tmp_path / "teammate"
    (home / ".config" / "engram").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ENGRAM_HOME", str(home / ".config" / "engram"))
    return home


def codes(envelope: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["code"], f["file"], f["fix"]) for f in envelope["data"]["findings"]]


def is_diff(line: str) -> bool:
    return line.startswith(("+++ ", "--- ", "@@ ", "+", "-"))


# --- the teammate's clone ----------------------------------------------------------------------
def test_a_teammates_clone_is_told_the_gemini_policy_git_cannot_carry(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """engram's own choice: the committed files name engram, the gate's file outside the
    repository is missing, so doctor fails with its code, the file and the one command."""
    for target in TEAM:
        assert run_json(capsys, "link", target)[0] == 0
    assert run_json(capsys, "doctor")[0] == 0
    teammate(tmp_path, monkeypatch)
    rc, env = run_json(capsys, "doctor")
    assert rc == 1, env
    assert codes(env) == [(MISSING, POLICY, "run `engram link gemini`")]
    assert env["data"]["ok"] is False
    rc, out, _ = run(capsys, "doctor")
    assert rc == 1
    assert f"{MISSING}  {POLICY}: " in out and "Fix: run `engram link gemini`" in out
    assert "OK: nothing to fix" not in out
    assert run_json(capsys, "link", "gemini")[0] == 0
    rc, env = run_json(capsys, "doctor")
    assert rc == 0, env
    assert not [c for c in codes(env) if c[0] == MISSING]


@pytest.mark.parametrize("target", ["claude", "codex", "opencode"])
def test_the_other_hosts_gates_travel_with_the_repository(
    target: str,
    ws: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """engram's own choice: Claude Code's ask rules, Codex's rules file and opencode's permission
    are committed files, so a fresh HOME needs none of them (its host steps are informational)."""
    assert run_json(capsys, "link", target)[0] == 0
    teammate(tmp_path, monkeypatch)
    rc, env = run_json(capsys, "doctor")
    assert rc == 0, env
    assert codes(env) == []


def test_a_policy_file_that_is_not_engrams_is_named_too(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_json(capsys, "link", "gemini")[0] == 0
    policy = private_home / ".gemini" / "policies" / "engram.toml"
    policy.write_text("# my own rules\n", "utf-8")
    rc, env = run_json(capsys, "doctor")
    assert rc == 1
    [(code, file, fix)] = codes(env)
    assert (code, file) == (MISSING, POLICY) and "`engram link gemini`" in fix and "move" in fix


# --- what link prints --------------------------------------------------------------------------
@pytest.mark.parametrize("target", TEAM)
def test_link_prints_each_file_then_its_next_line_last(
    target: str, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """engram's own choice: the diff is `--dry-run`'s; a link says what it wrote, then what the
    human does next, as its last line."""
    rc, out, _ = run(capsys, "link", target)
    assert rc == 0
    lines = out.splitlines()
    assert lines[-1].startswith("next: "), out
    assert [line for line in lines if line.startswith("next: ")] == [lines[-1]]
    assert not [line for line in lines if is_diff(line)], out
    assert all(line.startswith(f"{target}: ") for line in lines[:-1]), out
    assert len(lines) <= 6


def test_link_opencode_says_to_restart_opencode(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """README: opencode's step is a restart; link says it as the others say theirs."""
    rc, env = run_json(capsys, "link", "opencode")
    assert rc == 0
    assert "restart opencode" in env["data"]["results"][0]["step"]
    rc, out, _ = run(capsys, "link", "opencode")
    assert out.splitlines()[-1].startswith("next: restart opencode")


def test_link_claude_keeps_its_diff_for_dry_run(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "link", "claude", "--dry-run")
    assert rc == 0
    assert "+++ ./.mcp.json" in out and "+++ .claude/settings.json" in out
    assert out.splitlines()[-1].startswith("next: ")
    assert not (ws / ".mcp.json").exists()


# --- link all, unlink all ----------------------------------------------------------------------
def test_link_all_links_every_host_and_unlink_all_gives_everything_back(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_state(ws, private_home)
    rc, env = run_json(capsys, "link", "all")
    assert rc == 0, env
    results = env["data"]["results"]
    assert list(dict.fromkeys(r["target"] for r in results)) == list(TARGETS)
    for target, rel in WORKSPACE_FILES.items():
        assert (ws / rel).is_file(), target
    assert (private_home / ".gemini" / "policies" / "engram.toml").is_file()
    for target in GLOBAL_ONLY:
        [row] = [r for r in results if r["target"] == target]
        assert row["action"] == "skipped" and f"engram link {target} --global" in row["message"]
    assert not (private_home / ".codeium").exists()
    rc, out, _ = run(capsys, "link", "all")
    assert rc == 0
    lines = out.splitlines()
    first_next = next(i for i, line in enumerate(lines) if line.startswith("next: "))
    assert all(line.startswith("next: ") for line in lines[first_next:]), out
    assert len(lines[first_next:]) >= 4  # claude, codex, gemini, opencode
    assert not [line for line in lines if is_diff(line)]
    rc, env = run_json(capsys, "unlink", "all")
    assert rc == 0, env
    assert tree_state(ws, private_home) == before


def test_one_host_failing_does_not_stop_link_all(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """engram's own choice: each host in turn; a malformed file keeps its bytes and its own code,
    the others are linked, and the exit is 1 naming the host that failed."""
    broken = ws / "opencode.json"
    broken.write_text('{\n  "mcp": {,\n}\n', "utf-8")
    rc, env = run_json(capsys, "link", "all")
    assert rc == 1, env
    assert env["ok"] is True and env["data"]["ok"] is False  # the command ran; some hosts were linked
    assert broken.read_text("utf-8") == '{\n  "mcp": {,\n}\n'
    for target, rel in WORKSPACE_FILES.items():
        if target != "opencode":
            assert (ws / rel).is_file(), target
    assert env["data"]["failed"] == ["opencode"]
    [diagnostic] = env["diagnostics"]
    assert diagnostic["code"] == "ENGRAM_HOST_PARSE" and "opencode.json" in diagnostic["message"]
    rc, out, err = run(capsys, "link", "all")
    assert rc == 1
    lines = out.splitlines()
    assert any(line.startswith("not linked: opencode") for line in lines), out
    assert lines[-1].startswith("next: ")
    rc, env = run_json(capsys, "unlink", "all")
    assert rc == 1 and env["data"]["failed"] == ["opencode"]
    assert not (ws / ".mcp.json").exists() and not (ws / ".gemini" / "settings.json").exists()
    assert broken.read_text("utf-8") == '{\n  "mcp": {,\n}\n'


def test_a_single_links_malformed_file_has_its_own_code(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "opencode.json").write_text('{\n  "mcp": {,\n}\n', "utf-8")
    rc, env = run_json(capsys, "link", "opencode")
    assert rc == 1
    assert [d["code"] for d in env["diagnostics"]] == ["ENGRAM_HOST_PARSE"]


def test_link_all_global_dry_run_writes_nothing(
    ws: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_state(ws, private_home)
    rc, env = run_json(capsys, "link", "all", "--global", "--dry-run")
    assert rc == 0, env
    assert list(dict.fromkeys(r["target"] for r in env["data"]["results"])) == list(TARGETS)
    assert tree_state(ws, private_home) == before


def test_the_help_names_all(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("link", "unlink"):
        with pytest.raises(SystemExit):
            run(capsys, command, "--help")
        assert re.search(r"\ball\b", capsys.readouterr().out)
    with pytest.raises(SystemExit) as exited:
        run(capsys, "link", "al")
    assert exited.value.code == 2 and "Did you mean 'all'?" in capsys.readouterr().err


def test_link_all_off_path_writes_nothing_and_says_so_once(
    ws: Path,
    private_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """link.portable, for every host at once: one refusal naming `engram link all`, or with
    --machine-local one warning, not one per host."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", os.pathsep.join([str(empty), "/usr/bin", "/bin"]))
    monkeypatch.setenv("SHELL", "/bin/bash")
    before = tree_state(ws, private_home)
    rc, out, err = run(capsys, "link", "all")
    assert rc == 1 and err.count("ENGRAM_NOT_ON_PATH") == 1 and "engram link all --machine-local" in err
    assert tree_state(ws, private_home) == before
    rc, out, err = run(capsys, "link", "all", "--machine-local")
    assert rc == 0, err
    assert err.count("ENGRAM_NOT_PORTABLE") == 1 and err.count("ENGRAM_OUTSIDE_GIT") == 1
