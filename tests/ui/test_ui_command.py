"""`engram ui` (engram_mcp.cli.ui_command): its flags, what it prints, the browser opened or not,
and an agent's shell, where the page shows memory and proposals but writes none (and the agent,
which reads the command's output, is shown no approval code)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli import ui_command
from engram_mcp.errors import UsageError
from engram_mcp.hosts.doctor import health
from engram_mcp.ui import serve
from store.store import Store


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="engram")
    sub = parser.add_subparsers()

    def command(name: str, run: Callable[..., Any], help_text: str, **kwargs: Any) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.set_defaults(run=run, writing=kwargs.get("writing", False))
        return p

    ui_command.add_commands(command)
    return parser


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What `engram ui` started: the launch (never served: `run` returns at once) and the URL
    the browser was asked to open."""
    seen: dict[str, Any] = {"opened": []}

    def run(launch: serve.Launch, **kwargs: Any) -> str:
        seen["launch"], seen["idle"] = launch, kwargs["idle_seconds"]
        launch.server.server_close()
        return "engram ui: stopped."

    monkeypatch.setattr(serve, "run", run)
    monkeypatch.setattr(
        serve, "sealed", lambda: None
    )  # the page in this process: not the test process itself
    monkeypatch.setattr(serve, "open_browser", lambda url: seen["opened"].append(url) or True)
    return seen


def _ui(store: Store, *argv: str) -> Any:
    args = _parser().parse_args(["ui", *argv])
    return args.run(args, store)


def test_no_open_prints_the_url_and_opens_nothing(
    store: Store, launched: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = _ui(store, "--no-open", "--idle-minutes", "5")
    out = capsys.readouterr().out
    launch = launched["launch"]
    assert launch.url in out and launch.url.startswith("http://127.0.0.1:")
    assert "Ctrl-C stops it" in out and "after 5 minutes without a request" in out
    assert launched["opened"] == [] and launched["idle"] == 300
    assert outcome.ok and outcome.text == "engram ui: stopped."
    assert "key=" not in str(outcome.data)  # the key is printed once, never in --json's envelope


def test_without_no_open_the_browser_opens_the_url_and_it_is_printed_too(
    store: Store, launched: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _ui(store)
    assert launched["opened"] == [launched["launch"].url]
    assert launched["launch"].url in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--port", "70000"], "--port"),
        (["--port", "-1"], "--port"),
        (["--idle-minutes", "0"], "--idle-minutes"),
    ],
)
def test_bad_flags_are_usage_errors(
    store: Store, launched: dict[str, Any], argv: list[str], said: str
) -> None:
    with pytest.raises(UsageError, match=said):
        _ui(store, "--no-open", *argv)
    assert "launch" not in launched


def test_in_an_agents_shell_the_page_will_not_approve(
    store: Store,
    launched: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from engram_mcp.ops import agent_shell

    monkeypatch.setattr(agent_shell, "detect", lambda: ["CLAUDECODE is set"])
    store.agent_shell = True
    _ui(store, "--no-open")
    said = capsys.readouterr()
    assert "saves, retires and restores nothing" in said.err
    assert "approval code" not in said.out + said.err
    page = launched["launch"].app.page
    assert page.approvals is not None
    assert page.code.current not in said.out + said.err


def test_at_the_persons_terminal_the_code_is_printed_with_the_url(
    store: Store, launched: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _ui(store, "--no-open")
    out = capsys.readouterr().out
    assert f"approval code {launched['launch'].app.page.code.current}" in out


def test_where_other_processes_reach_the_pages_memory_its_saves_wait_for_verify(
    store: Store,
    launched: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """No Yama: a process of the person's could have set the page's code before it was made
    (by writing the command's memory while it started), so a save there is not taken as the
    person's own: it is sealed for review, as a write without a terminal is."""
    scope = tmp_path / "ptrace_scope"
    scope.write_text("0\n", encoding="ascii")
    monkeypatch.setattr(health, "PTRACE_SCOPE", scope)
    _ui(store, "--no-open")
    said = capsys.readouterr()
    assert "listed by `engram verify`" in said.err
    assert store.agent_shell  # what the page commits is sealed as made without the person
    assert f"approval code {launched['launch'].app.page.code.current}" in said.out  # still approves


def test_where_yama_protects_the_pages_memory_its_saves_are_the_persons(
    store: Store, launched: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _ui(store, "--no-open")
    assert "listed by `engram verify`" not in capsys.readouterr().err
    assert not store.agent_shell
