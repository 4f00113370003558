"""Which command a host entry runs, and whether an entry is ours (SPEC §8).

engram never writes a registry download (`uvx engram-mcp`, `npx …`): the name `engram-mcp` on
the public registry belongs to another project. An entry is ours when its command is an
`engram-mcp` console script of this package (its text imports `engram_mcp`), or this Python
running `-m engram_mcp`.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path

from engram_mcp.platform import script_suffix


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


def _same(a: Path, b: Path) -> bool:
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
    if found is not None and _same(found, script):
        return name, []
    return str(script), []


SCRIPT_HEAD = 4096
SCRIPT_TAIL = 64 * 1024
"""What is read of a command's file to tell whether it is our console script: its first bytes
(a POSIX script names engram_mcp in its text), and its last (a Windows `.exe` launcher carries
its script in a zip appended at the end). Bounded: a host config may name any file."""


def _is_our_script(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            head = file.read(SCRIPT_HEAD)
            size = file.seek(0, os.SEEK_END)
            file.seek(max(len(head), size - SCRIPT_TAIL))
            tail = file.read(SCRIPT_TAIL)
    except OSError:
        return False
    return b"engram_mcp" in head or b"engram_mcp" in tail


def is_ours(command: object, args: Sequence[object] = ()) -> bool:
    if not isinstance(command, str):
        return False
    name = Path(command).name.removesuffix(".exe")
    if name == "engram-mcp":
        target = resolve(command)
        return target is None or _is_our_script(target)
    words = [str(a) for a in args[:3]]
    return "python" in name and (words[:2] == ["-m", "engram_mcp"] or words == ["-P", "-m", "engram_mcp"])


def is_current(command: object, args: Sequence[object] = ()) -> bool:
    """The entry runs this very installation (its pin is current)."""
    if not isinstance(command, str):
        return False
    want_command, want_args = pinned("engram-mcp")
    if command == want_command and list(args[: len(want_args)]) == want_args:
        return True
    target, script = resolve(command), installed_script("engram-mcp")
    return target is not None and script is not None and _same(target, script)
