"""engram-mcp's flags and environment, and hand edits seen by a running server (SPEC §2, §6, §9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_mcp.cli.main import main as cli_main
from engram_mcp.mcp.server import main as server_main
from protocol.errors import INVALID_PARAMS
from tests.support.wire import WireSession


def test_version_and_help_print_and_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    """Spec-mandated flags: --version and --help (`engram-mcp`'s own `main`, which exits before
    serving; tests/process/test_process.py runs the real process)."""
    assert server_main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("engram-mcp ")
    assert server_main(["--help"]) == 0
    usage = capsys.readouterr().out
    assert "--read-only" in usage and "--no-elicitation" in usage


def test_unknown_option_is_ignored_with_one_stderr_note(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spec-mandated: an unknown option is noted once on stderr and the server still serves."""
    with WireSession(workspace, "--frobnicate") as s:
        assert s.initialize()["result"]["protocolVersion"] == "2025-11-25"
        assert s.close() == 0
    assert capsys.readouterr().err.count("--frobnicate") == 1


def test_always_load_marks_engram_load_in_tools_list(workspace: Path) -> None:
    """Spec-mandated: --always-load sets _meta["anthropic/alwaysLoad"] on engram_load only."""
    with WireSession(workspace, "--always-load") as s:
        s.initialize()
        tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
    assert tools["engram_load"]["_meta"] == {"anthropic/alwaysLoad": True}
    assert all(
        "anthropic/alwaysLoad" not in t.get("_meta", {}) for name, t in tools.items() if name != "engram_load"
    )


def test_read_only_writes_nothing_and_refuses_write_tools_by_name(workspace: Path) -> None:
    """Spec-mandated: read-only reads count no usage; a write tool is unknown, saying why."""
    with WireSession(workspace, env={"ENGRAM_READ_ONLY": "1"}) as s:
        s.initialize()
        assert not s.call("engram_load", {"id": "use-uv-for-python"})["result"]["isError"]
        assert not s.request("resources/read", {"uri": "engram://memory/use-uv-for-python"}).get("error")
        refused = s.call("engram_save", {"candidates": []})
        assert s.close() == 0
    assert refused["error"]["code"] == INVALID_PARAMS and "read-only" in refused["error"]["message"]
    assert not (workspace / ".engram" / "usage.json").exists()
    assert not (workspace / ".engram" / "index.json").exists()


def test_fetches_are_counted_and_flushed_on_exit(workspace: Path) -> None:
    """Spec-mandated: a fetch by id (tool or resource) increments usage.json."""
    with WireSession(workspace) as s:
        s.initialize()
        s.call("engram_load", {"id": "use-uv-for-python"})
        s.request("resources/read", {"uri": "engram://memory/use-uv-for-python"})
        assert s.close() == 0
    usage = (workspace / ".engram" / "usage.json").read_text()
    assert '"use-uv-for-python":2' in usage.replace(" ", "")


def test_workspace_flag_and_environment_choose_the_store(workspace: Path, tmp_path: Path) -> None:
    """Spec-mandated discovery: --workspace DIR and ENGRAM_WORKSPACE win over the cwd."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for args, env in (((f"--workspace={workspace}",), {}), ((), {"ENGRAM_WORKSPACE": str(workspace)})):
        with WireSession(elsewhere, *args, env=env) as s:
            s.initialize()
            data = s.call("engram_status")["result"]["structuredContent"]["data"]
        assert data["workspace"] == str(workspace.resolve())
        assert data["counts"]["project"] == 40


def test_a_hand_edit_is_seen_without_restart_and_reported_by_verify(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Acceptance: a memory edited by hand is picked up live and reported by `engram verify`."""
    monkeypatch.chdir(workspace)
    assert cli_main(["verify", "--accept"]) == 0
    with WireSession(workspace) as s:
        s.initialize()
        before = s.call("engram_search", {"query": "zanzibarquux"})["result"]["structuredContent"]["data"]
        assert before["entries"] == []
        path = workspace / ".engram" / "memory" / "use-uv-for-python.md"
        path.write_text(path.read_text() + "\nAlso: zanzibarquux mirrors are banned.\n")
        after = s.call("engram_search", {"query": "zanzibarquux"})["result"]["structuredContent"]["data"]
        assert [e["id"] for e in after["entries"]] == ["use-uv-for-python"]
    assert cli_main(["verify", "--json"]) == 1
    out = capsys.readouterr().out
    assert '"mismatched": [\n      "use-uv-for-python"\n    ]' in out
