"""What differs between Linux, macOS and Windows for the application, in one place: where the
user-level host configs live, how console scripts are named and where they are installed, and
which signals ask engram to stop. Each function reads `sys.platform` when called, so a test can
fake the platform with monkeypatch.

The rest, and why: docs/design.md, `engram_mcp/platform.py`.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import Any, Final

STOPPED_EXIT: Final = 143
"""The exit code after a stop signal (128 + SIGTERM's 15, on every platform)."""


def system() -> str:
    """linux (and every other POSIX), darwin or win32."""
    return sys.platform if sys.platform in ("darwin", "win32") else "linux"


def script_suffix() -> str:
    """How a console script's file name ends: `.exe` on Windows."""
    return ".exe" if system() == "win32" else ""


def script_name(name: str) -> str:
    """A console script's file name: `engram-mcp`, `engram-mcp.exe` on Windows (pip writes a
    small launcher program there, so a host spawns it directly, with no shell: unlike `npx`,
    which is `npx.cmd` on Windows)."""
    return name + script_suffix()


def venv_scripts(venv: Path) -> Path:
    """Where a virtual environment keeps its console scripts: `bin`, `Scripts` on Windows."""
    return venv / ("Scripts" if system() == "win32" else "bin")


def stop_signals() -> tuple[str, ...]:
    """The names of the signals on which engram stops as on SIGTERM (see the module docstring):
    SIGTERM; on Windows also SIGBREAK (Ctrl+Break), since SIGTERM never comes there."""
    return ("SIGTERM", "SIGBREAK") if system() == "win32" else ("SIGTERM",)


Handler = Callable[[int, FrameType | None], object]
_Previous = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


@contextlib.contextmanager
def on_stop_signals(handler: Handler) -> Iterator[tuple[int, ...]]:
    """`handler` for each of `stop_signals()` that this Python's `signal` module has, for the
    duration, and the previous handlers back after; yields the signal numbers installed. Off
    the main thread nothing is installed (Python allows handlers only there)."""
    previous: list[tuple[int, _Previous]] = []
    try:
        for name in stop_signals():
            number = getattr(signal, name, None)
            if not isinstance(number, int):
                continue  # this Python has no such signal (SIGBREAK off Windows)
            try:
                previous.append((number, signal.signal(number, handler)))
            except ValueError:  # not the main thread: leave signals alone
                break
        yield tuple(number for number, _ in previous)
    finally:
        for number, old in reversed(previous):
            signal.signal(number, old)


def _roaming(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env.get("APPDATA") or home / "AppData" / "Roaming")


def _xdg_config(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config")


def vscode_user_dir(home: Path, env: Mapping[str, str]) -> Path:
    """VS Code's user profile folder (its user-level `mcp.json` lives here)."""
    if system() == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if system() == "win32":
        return _roaming(home, env) / "Code" / "User"
    return _xdg_config(home, env) / "Code" / "User"


def claude_desktop_config(home: Path, env: Mapping[str, str]) -> Path:
    """Claude Desktop's `claude_desktop_config.json` (on Windows the MSIX package's, if installed)."""
    name = "claude_desktop_config.json"
    if system() == "darwin":
        return home / "Library" / "Application Support" / "Claude" / name
    if system() == "win32":
        local = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local") / "Packages"
        msix = sorted(local.glob("Claude_*/LocalCache/Roaming/Claude")) if local.is_dir() else []
        return (msix[0] if msix else _roaming(home, env) / "Claude") / name
    return _xdg_config(home, env) / "Claude" / name
