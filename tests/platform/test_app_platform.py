"""engram_mcp/platform.py on a faked macOS and Windows (issue 22, Build 6): host config folders,
console-script names, and the signals that stop engram. Each case asserts what differs from
Linux, so a function that ignored the platform would fail."""

from __future__ import annotations

import json
import signal
import sys
import sysconfig
import threading
from pathlib import Path
from types import FrameType

import pytest

from engram_mcp import platform
from engram_mcp.hosts.targets import HostFile, resolve
from engram_mcp.mcp import server
from tests.platform.layouts import engram

HOME = Path("/home/ada")


@pytest.fixture(params=["linux", "darwin", "win32"])
def system(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(sys, "platform", request.param)
    name: str = request.param
    return name


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("linux", "linux"),
        ("freebsd14", "linux"),
        ("cygwin", "linux"),
        ("darwin", "darwin"),
        ("win32", "win32"),
    ],
)
def test_every_posix_but_macos_is_linux(raw: str, named: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """engram's choice: the BSDs and Cygwin keep their host configs where Linux does."""
    monkeypatch.setattr(sys, "platform", raw)
    assert platform.system() == named


def test_console_scripts_are_exe_files_in_scripts_on_windows(system: str) -> None:
    """pip writes `engram-mcp.exe` into a venv's `Scripts` on Windows, `engram-mcp` into `bin`
    elsewhere."""
    windows = system == "win32"
    assert platform.script_suffix() == (".exe" if windows else "")
    assert platform.script_name("engram-mcp") == ("engram-mcp.exe" if windows else "engram-mcp")
    assert platform.venv_scripts(Path(".venv")) == Path(".venv", "Scripts" if windows else "bin")


ENV = {"APPDATA": "/appdata/roaming", "LOCALAPPDATA": "/appdata/local", "XDG_CONFIG_HOME": "/xdg"}
VSCODE = {
    "linux": Path("/xdg/Code/User"),
    "darwin": HOME / "Library" / "Application Support" / "Code" / "User",
    "win32": Path("/appdata/roaming/Code/User"),
}
VSCODE_BARE = {
    "linux": HOME / ".config" / "Code" / "User",
    "darwin": VSCODE["darwin"],
    "win32": HOME / "AppData" / "Roaming" / "Code" / "User",
}


def test_vscode_keeps_its_user_profile_where_each_platform_puts_it(system: str) -> None:
    """XDG_CONFIG_HOME on Linux, ~/Library/Application Support on macOS (which ignores XDG and
    APPDATA), %APPDATA% on Windows; each platform's default when the variable is unset."""
    assert platform.vscode_user_dir(HOME, ENV) == VSCODE[system]
    assert platform.vscode_user_dir(HOME, {}) == VSCODE_BARE[system]


DESKTOP = {
    "linux": Path("/xdg/Claude/claude_desktop_config.json"),
    "darwin": HOME / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json",
    "win32": Path("/appdata/roaming/Claude/claude_desktop_config.json"),
}


def test_claude_desktop_keeps_its_config_where_each_platform_puts_it(system: str, tmp_path: Path) -> None:
    """Claude Desktop: ~/.config/Claude, ~/Library/Application Support/Claude, %APPDATA%\\Claude;
    on Windows the MSIX package's own folder under %LOCALAPPDATA%\\Packages wins when installed."""
    env = {**ENV, "LOCALAPPDATA": str(tmp_path / "local")}
    assert platform.claude_desktop_config(HOME, env) == DESKTOP[system]
    package = tmp_path / "local" / "Packages" / "Claude_pzs8sxrjxfjjc" / "LocalCache" / "Roaming" / "Claude"
    package.mkdir(parents=True)
    msix = package / DESKTOP[system].name if system == "win32" else DESKTOP[system]
    assert platform.claude_desktop_config(HOME, env) == msix


def test_link_global_targets_resolve_into_each_platforms_folders(system: str, tmp_path: Path) -> None:
    """`engram link vscode --global` and `claude-desktop --global` edit the files above; the
    workspace's own files do not move with the platform."""
    env = {**ENV, "HOME": str(HOME), "LOCALAPPDATA": str(tmp_path / "none")}
    vscode = resolve("vscode", True, tmp_path, env)
    desktop = resolve("claude-desktop", True, tmp_path, env)
    assert isinstance(vscode, HostFile) and isinstance(desktop, HostFile)
    assert (vscode.path, desktop.path) == (VSCODE[system] / "mcp.json", DESKTOP[system])
    workspace = resolve("vscode", False, tmp_path, env)
    assert isinstance(workspace, HostFile) and workspace.path == tmp_path / ".vscode" / "mcp.json"


def test_engram_link_vscode_global_on_macos_writes_the_library_profile(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole command on a faked macOS: the entry lands in ~/Library/Application
    Support/Code/User/mcp.json, not in Linux's ~/.config/Code/User."""
    sysconfig.get_path("scripts")  # read once as this Python's own platform (it caches its data)
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert engram(["link", "vscode", "--global"]) == 0, capsys.readouterr()
    written = private_home / "Library" / "Application Support" / "Code" / "User" / "mcp.json"
    assert "engram" in json.loads(written.read_text("utf-8"))["servers"]
    assert not (private_home / ".config" / "Code").exists()


def test_windows_stops_on_ctrl_break_too_and_never_on_hup_or_pipe(system: str) -> None:
    """SIGTERM everywhere (Windows never delivers it, but a handler is harmless), SIGBREAK on
    Windows only; no platform installs SIGHUP or SIGPIPE (Windows has neither)."""
    expected = ("SIGTERM", "SIGBREAK") if system == "win32" else ("SIGTERM",)
    assert platform.stop_signals() == expected
    assert not {"SIGHUP", "SIGPIPE"} & set(platform.stop_signals())


def _handler(signum: int, frame: FrameType | None) -> None:
    raise AssertionError("not called")


def test_stop_handlers_are_installed_for_the_duration_and_restored(
    system: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each stop signal this Python has gets the handler, and the previous one back after. A
    faked Windows here has no SIGBREAK, so it is skipped; one stood in by SIGUSR1 is installed."""
    before = signal.getsignal(signal.SIGTERM)
    with platform.on_stop_signals(_handler) as installed:
        assert installed == (signal.SIGTERM,)
        assert signal.getsignal(signal.SIGTERM) is _handler
    assert signal.getsignal(signal.SIGTERM) is before
    if system != "win32":
        return
    monkeypatch.setattr(signal, "SIGBREAK", signal.SIGUSR1, raising=False)
    with platform.on_stop_signals(_handler) as installed:
        assert installed == (signal.SIGTERM, signal.SIGUSR1)
        assert signal.getsignal(signal.SIGUSR1) is _handler
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL


def test_off_the_main_thread_no_handler_is_installed() -> None:
    """Python allows signal handlers only in the main thread: elsewhere nothing, and no error."""
    seen: list[tuple[int, ...]] = []

    def run() -> None:
        with platform.on_stop_signals(_handler) as installed:
            seen.append(installed)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    assert seen == [()]
    assert signal.getsignal(signal.SIGTERM) is not _handler


def test_the_server_stops_quietly_on_ctrl_break_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """engram-mcp on a faked Windows, its SIGBREAK stood in by SIGUSR1: the signal during a
    session ends it with 143, as SIGTERM does on POSIX (fails on ab538aa: only SIGTERM was
    handled, so Ctrl+Break was never seen)."""
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(signal, "SIGBREAK", signal.SIGUSR1, raising=False)
    handled: list[object] = []

    def serve(argv: object) -> int:
        handled.append(signal.getsignal(signal.SIGUSR1))
        if handled[0] not in (signal.SIG_DFL, signal.SIG_IGN, None):
            signal.raise_signal(signal.SIGUSR1)
        return 0

    monkeypatch.setattr(server, "_serve", serve)
    assert server.main([]) == 143
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL
