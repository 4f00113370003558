"""Which command a host entry runs, and whether an entry is ours (SPEC §8).

engram never writes a registry download (`uvx engram-mcp`, `npx …`): the name `engram-mcp` on
the public registry belongs to another project. An entry is ours when its command is an
`engram-mcp` console script of this package (its text imports `engram_mcp`), or this Python
running `-P -m engram_mcp` (or `-I`: without either, the clone's `engram_mcp/` is imported); never a relative path (`node_modules/.bin/engram-mcp` runs what the
folder the host starts in holds: a clone's) nor a file inside the workspace that is not this
installation's script (a clone can plant one whose text names `engram_mcp`).

The `env` link keeps on an entry of ours loses every variable that changes what the
interpreter or the loader runs (`unsafe_env`): with `PYTHONPATH=.` a clone's `engram_mcp/`
would be imported in spite of `-P`, with `LD_PRELOAD` any library loaded; a committed
(workspace) entry also loses every folder it could point at the clone (`HOME`, `PATH`, `XDG_*`,
`GIT_*`…), whatever its value: `/proc/self/cwd` is absolute and is the clone.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from engram_mcp.platform import script_suffix
from store.files.fsutil import open_regular


def installed_script(name: str) -> Path | None:
    """This installation's console script `name`, if it exists."""
    for folder in (Path(sysconfig.get_path("scripts")), Path(sys.executable).parent):
        candidate = folder / f"{name}{script_suffix()}"
        if candidate.is_file():
            return candidate
    return None


def resolve(command: str) -> Path | None:
    """The file a command runs: an existing path, or what PATH finds."""
    path = Path(command).expanduser()
    if path.is_absolute() or "/" in command or "\\" in command:
        return path if path.is_file() else None
    found = shutil.which(command)
    return Path(found) if found else None


def same_file(a: Path, b: Path) -> bool:
    """`a` and `b` are one file (the same path resolved, or the same inode); False when either
    cannot be looked at."""
    try:
        return a.resolve() == b.resolve() or a.samefile(b)
    except OSError:
        return False


def pinned(name: str) -> tuple[str, list[str]]:
    """(command, args) to write: the bare name when PATH finds this installation's script,
    else its absolute path; without an installed script, this Python with `-P -m` (`-P`: the
    folder the host starts it in, a clone's, is not put on the import path, so a planted
    `engram_mcp/` or `orjson.py` there is never imported)."""
    script = installed_script(name)
    if script is None:
        module = "engram_mcp" if name == "engram-mcp" else "engram_mcp.cli"
        return sys.executable, ["-P", "-m", module]
    found = resolve(name)
    if found is not None and same_file(found, script):
        return name, []
    return str(script), []


SCRIPT_HEAD = 4096
SCRIPT_TAIL = 64 * 1024
"""What is read of a command's file to tell whether it is our console script: its first bytes
(a POSIX script names engram_mcp in its text), and its last (a Windows `.exe` launcher carries
its script in a zip appended at the end). Bounded: a host config may name any file."""


def _is_our_script(path: Path) -> bool:
    try:  # a regular file only: a FIFO named engram-mcp on PATH is never waited on
        with os.fdopen(open_regular(path, follow=True), "rb") as file:
            head = file.read(SCRIPT_HEAD)
            size = file.seek(0, os.SEEK_END)
            file.seek(max(len(head), size - SCRIPT_TAIL))
            tail = file.read(SCRIPT_TAIL)
    except OSError:
        return False
    return b"engram_mcp" in head or b"engram_mcp" in tail


def _relative(command: str) -> bool:
    """A path, not a bare name, that is not absolute: it depends on the folder it starts in."""
    return ("/" in command or "\\" in command) and not Path(command).expanduser().is_absolute()


def _planted(target: Path, workspace: Path | None) -> bool:
    """`target` lies in the workspace and is neither this installation's script nor this Python
    (engram developed in its own checkout runs from the checkout's virtual environment)."""
    if workspace is None:
        return False
    try:
        inside = target.resolve().is_relative_to(workspace.resolve())
    except (OSError, RuntimeError):
        return True
    ours = [p for p in (installed_script("engram-mcp"), Path(sys.executable)) if p is not None]
    return inside and not any(same_file(target, p) for p in ours)


SAFE_PATH_FLAGS: Final = frozenset({"-P", "-I"})
"""The interpreter flags that keep the folder it starts in off the import path: without one,
`python -m engram_mcp` in a clone imports the clone's `engram_mcp/`."""


def _safe_module_run(args: Sequence[object]) -> bool:
    """`args` start with `-P` or `-I` (maybe both), then `-m engram_mcp`."""
    words = [str(a) for a in args[:4]]
    if "-m" not in words:
        return False
    at = words.index("-m")
    flags = words[:at]
    return bool(flags) and set(flags) <= SAFE_PATH_FLAGS and words[at + 1 : at + 2] == ["engram_mcp"]


LINK_ARGS: Final = frozenset({"--always-load", "--read-only"})
"""The server flags an entry of ours may carry: the one `engram link` writes (`--always-load`,
Claude without the SessionStart hook) and `--read-only`, which only takes writes away (a user
adds it by hand). Any other argument of a clone's entry (`--workspace=…`, `--no-elicitation`)
is not kept by a re-pin, and doctor reports it."""


def server_args(command: object, args: Sequence[object]) -> list[object]:
    """The arguments an entry of ours gives the server: after `-m engram_mcp` for this Python,
    all of them for the script."""
    words = [str(a) for a in args]
    if isinstance(command, str) and "python" in Path(command).name and "-m" in words[:4]:
        return list(args[words.index("-m") + 2 :])
    return list(args)


def unknown_args(command: object, args: Sequence[object]) -> list[str]:
    """The server arguments of an entry of ours that link does not write (LINK_ARGS)."""
    return [str(a) for a in server_args(command, args) if not (isinstance(a, str) and a in LINK_ARGS)]


def is_ours(command: object, args: Sequence[object] = (), workspace: Path | None = None) -> bool:
    """Whether a host entry's command runs this package's server (see the module docstring);
    `workspace`, when given, is the project whose files may be a clone's."""
    if not isinstance(command, str) or _relative(command):
        return False
    name = Path(command).name.removesuffix(".exe")
    if name == "engram-mcp":
        target = resolve(command)
        if target is not None and _planted(target, workspace):
            return False
        return target is None or _is_our_script(target)
    if "python" not in name or not _safe_module_run(args):
        return False
    target = resolve(command)
    return target is None or not _planted(target, workspace)


SAFE_PYTHON_ENV: Final = frozenset(
    {
        "PYTHONUNBUFFERED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "PYTHONSAFEPATH",
        "PYTHONLEGACYWINDOWSSTDIO",
    }
)
"""The `PYTHON*` variables that only change how output is encoded or buffered; every other
(`PYTHONPATH`, `PYTHONHOME`, `PYTHONSTARTUP`, `PYTHONUSERBASE`, `PYTHONEXECUTABLE`,
`PYTHONINSPECT`, `PYTHONPLATLIBDIR`, `PYTHONWARNINGS`, which imports the module a category
names, …) may change what the interpreter runs."""


FOLDER_ENV: Final = frozenset({"ENGRAM_HOME", "HOME", "ENGRAM_WORKSPACE"})
"""Variables naming the folders engram trusts: the user scope with its secret (`HOME` gives
its default), and the workspace. A relative one lets a clone's entry point engram at a folder
of the clone, a planted secret included, so every tag it checks would be the clone's."""

COMMITTED_ENV: Final = frozenset({*FOLDER_ENV, "PATH"})
"""With the `XDG_*` and `GIT_*` prefixes (COMMITTED_PREFIXES): variables a project's committed
entry never sets, whatever their value. An absolute path can still be the clone's
(`/proc/self/cwd` is the folder the host starts in); `XDG_CONFIG_HOME` names git's global
config, and a config can set trace2 targets that write anywhere."""

COMMITTED_PREFIXES: Final = ("XDG_", "GIT_")

SPECIAL_ROOTS: Final = ("/proc/", "/dev/")
"""Absolute paths that are not a folder of the user's: `/proc/self/cwd` is the current one."""


def _not_a_folder(value: object, *, relative_too: bool = True) -> bool:
    """`value` is not a string, starts in /proc/ or /dev/, or (`relative_too`) is relative."""
    if not isinstance(value, str):
        return True
    path = str(Path(value).expanduser())
    if path.startswith(SPECIAL_ROOTS) or path in ("/proc", "/dev"):
        return True
    return relative_too and not Path(path).is_absolute()


def unsafe_env(env: object, scope: str = "global") -> list[str]:
    """The names in an entry's `env` that change what the interpreter or the loader runs, or
    what engram trusts: a name that is empty or holds `=` (Node passes `HOME=./h/` and Python
    reads `HOME`), `PYTHON*` but the harmless few, `LD_*`, `DYLD_*`, `ENGRAM_NOW` (a fixed
    clock: approval tokens that never expire); in a `workspace` entry (a committed file) every
    COMMITTED_ENV, `XDG_*` and `GIT_*` whatever its value; elsewhere a `PATH` with a relative
    folder (it can send the bare `engram-mcp` to a clone's file), a relative `ENGRAM_HOME`,
    `HOME`, `ENGRAM_WORKSPACE` (FOLDER_ENV), `XDG_*` or `GIT_*`, and any of them in /proc/ or
    /dev/."""
    if not isinstance(env, dict):
        return []
    found = []
    for name, value in env.items():
        key = str(name).upper()
        odd = not key or "=" in key
        python = key.startswith("PYTHON") and key not in SAFE_PYTHON_ENV
        loader = key.startswith(("LD_", "DYLD_")) or key == "ENGRAM_NOW"
        named = key in COMMITTED_ENV or key.startswith(COMMITTED_PREFIXES)
        if scope == "workspace":
            folder = named
        elif key == "PATH":
            folder = not isinstance(value, str) or any(_not_a_folder(p) for p in value.split(os.pathsep))
        else:
            folder = named and _not_a_folder(value)
        if odd or python or loader or folder:
            found.append(str(name))
    return found


def is_current(command: object, args: Sequence[object] = ()) -> bool:
    """The entry runs this very installation (its pin is current)."""
    if not isinstance(command, str):
        return False
    want_command, want_args = pinned("engram-mcp")
    if command == want_command and list(args[: len(want_args)]) == want_args:
        return True
    target, script = resolve(command), installed_script("engram-mcp")
    return target is not None and script is not None and same_file(target, script)
