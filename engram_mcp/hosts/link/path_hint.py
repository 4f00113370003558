"""Whether PATH finds this installation's commands here, and how to put them there.

The files `engram link` writes into a workspace are committed, so they name the bare commands
`engram-mcp` and `engram`, which each teammate's PATH resolves. That is right only when PATH
here finds this installation's scripts: `off_path()` says when it does not, and
`profile_hint()` says which file puts a folder on PATH for the user's shell and system.

Login shells are what counts: Codex runs its commands in one, `/etc/profile` resets PATH there,
and bash then reads `~/.bash_profile` (only that, when it exists) or `~/.profile`, never
`~/.bashrc` (whose usual first lines return at once in a shell that is not interactive); zsh
reads `~/.zprofile`; fish reads `~/.config/fish/config.fish` in every shell. On Windows the
user's `Path` environment variable is the one place.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from engram_mcp.hosts.link.launch import installed_script, same_file
from engram_mcp.hosts.targets import home_of
from engram_mcp.platform import system
from store.safety import untrusted

COMMANDS: Final = ("engram-mcp", "engram")
"""The two console scripts workspace files name: the server hosts start, and the CLI (the
SessionStart hook, the `/engram` command's text, the shell's ask rules)."""

INSTALL: Final = (
    "install engram into a virtual environment (`python3 -m venv ~/.local/share/engram-venv`, then "
    "`~/.local/share/engram-venv/bin/pip install ./engram-mcp`), which puts engram-mcp and engram "
    "in its bin folder"
)
"""The fix when this engram has no console scripts at all (it was run from a source folder)."""


@dataclass(frozen=True, slots=True)
class OffPath:
    """PATH here does not lead to this installation's `name`."""

    name: str
    folder: Path | None
    """This installation's scripts folder; None when it has no console scripts (a source run)."""
    found: Path | None
    """What PATH finds under `name` instead, if anything."""

    def problem(self) -> str:
        """One clause for a person: what is wrong, and where this installation is (every path
        absolute, and escaped: a folder on PATH may be named with any bytes)."""
        if self.folder is None:
            return (
                f"this engram has no {self.name} command (it runs from a source folder as "
                "`python -m engram_mcp`), so no PATH can find it"
            )
        folder = untrusted.line(os.path.abspath(self.folder))
        if self.found is not None:
            return (
                f"PATH here finds another {self.name} first, {untrusted.line(os.path.abspath(self.found))} "
                f"(this installation's is in {folder})"
            )
        return f"{self.name} is not on PATH here (this installation's is in {folder})"


def off_path(env: Mapping[str, str] = os.environ) -> OffPath | None:
    """Why PATH in `env` does not find this installation's `engram-mcp` and `engram`, or None
    when it finds both."""
    for name in COMMANDS:
        script = installed_script(name)
        where = shutil.which(name, path=env.get("PATH"))
        found = Path(where) if where else None
        if script is None:
            return OffPath(name, None, found)
        if found is None or not same_file(found, script):
            return OffPath(name, script.parent, found)
    return None


@dataclass(frozen=True, slots=True)
class ProfileHint:
    """How to put one folder on PATH for the user's login shell."""

    file: str
    """Where the line goes: `~/.profile`, `~/.zprofile`, …, or the user's Path variable."""
    line: str
    """The line (or, on Windows, the PowerShell command) to add."""
    why: str
    """Why that file: which shells read it."""
    then: str
    """How to have it take effect."""

    def text(self) -> str:
        """One sentence: add the line to the file (why), then make it take effect."""
        if self.file.startswith("~"):
            return f"add the line `{self.line}` to {self.file} ({self.why}), then {self.then}"
        return f"{self.line} ({self.why}), then {self.then}"


def _shown(folder: Path, home: Path) -> str:
    """`folder` as a shell line names it: under `$HOME` when it is in the home folder."""
    try:
        return "$HOME/" + folder.relative_to(home).as_posix()
    except ValueError:
        return folder.as_posix()


def _sh_path(folder: str, suffix: str = "", *, fish: bool = False) -> str:
    """`folder` (then `suffix`, left as it is) in double quotes, a `$HOME/` prefix kept expandable."""
    head = "$HOME/" if folder.startswith("$HOME/") else ""
    rest = folder[len(head) :]
    for char in ("\\", '"', "$", *(() if fish else ("`",))):
        rest = rest.replace(char, "\\" + char)
    return f'"{head}{rest}{suffix}"'


def profile_hint(folder: Path, env: Mapping[str, str] = os.environ) -> ProfileHint:
    """Which file puts `folder` on PATH for the user's shell (`$SHELL`) on this system, the line
    to add there, and how to have it take effect."""
    home = home_of(env)
    if system() == "win32":
        return ProfileHint(
            "your user Path environment variable",
            "add the folder to your user Path in PowerShell: "
            f"`[Environment]::SetEnvironmentVariable('Path', '{folder};' + "
            "[Environment]::GetEnvironmentVariable('Path', 'User'), 'User')`",
            'or in Settings, "Edit environment variables for your account", then Path',
            "open a new terminal",
        )
    shell = Path(env.get("SHELL") or "sh").name
    dir_ = _shown(folder, home)
    if shell == "fish":
        return ProfileHint(
            "~/.config/fish/config.fish",
            f"fish_add_path {_sh_path(dir_, fish=True)}",
            "fish reads it in every shell, login shells included",
            "open a new terminal",
        )
    export = f"export PATH={_sh_path(dir_, ':$PATH')}"
    new_terminal = "open a new terminal" if system() == "darwin" else None
    if shell == "zsh":
        return ProfileHint(
            "~/.zprofile",
            export,
            "zsh reads it in every login shell, such as the one Codex runs its commands in; "
            "~/.zshrc is read only by interactive shells",
            new_terminal or "log in again (or run `. ~/.zprofile` in this terminal)",
        )
    if shell == "bash" and (home / ".bash_profile").exists():
        file = "~/.bash_profile"
        why = (
            "bash's login shell, such as the one Codex runs its commands in, reads only "
            "~/.bash_profile when it exists, and never ~/.bashrc"
        )
    elif shell == "bash":
        file = "~/.profile"
        why = (
            "bash reads it in every login shell, such as the one Codex runs its commands in; "
            "~/.bashrc is not read there"
        )
    else:
        file = "~/.profile"
        why = "login shells read it, such as the one Codex runs its commands in"
    return ProfileHint(
        file, export, why, new_terminal or f"log in again (or run `. {file}` in this terminal)"
    )


def fix(off: OffPath, env: Mapping[str, str] = os.environ) -> str:
    """How to make PATH find this installation: the profile line for its folder, or the install."""
    if off.folder is None:
        return f"{INSTALL}, then put that folder on PATH"
    return profile_hint(off.folder, env).text()
