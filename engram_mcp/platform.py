"""What differs between Linux, macOS and Windows for the application, in one place: where the
user-level host configs live and how console scripts are named. Each function reads
`sys.platform` when called, so a test can fake the platform with monkeypatch.

File-system behaviour (folder fsync, locking, path separators) is in store/files/platform.py.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path


def system() -> str:
    """linux (and every other POSIX), darwin or win32."""
    return sys.platform if sys.platform in ("darwin", "win32") else "linux"


def script_suffix() -> str:
    """How a console script's file name ends: `.exe` on Windows."""
    return ".exe" if system() == "win32" else ""


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
