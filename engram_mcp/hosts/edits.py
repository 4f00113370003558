"""The file edits every host change goes through: read, atomic write with one `.bak`, diff, and
the per-file `Result` that `link`, `unlink`, `upgrade` and `doctor` report.

A host config kept as a symbolic link (dotfiles) is edited through its link (SPEC §8): the
target's bytes change, atomically in the target's folder with the target's mode, and the link
stays; the `.bak` is a plain copy beside the link, where `unlink` looks for it (not in the
dotfiles repository). A link whose target is missing is refused with a message naming it,
rather than replaced by a file."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from engram_mcp.hosts.errors import HostError
from store.files.fsutil import clean_stale_temps, write_atomic
from store.safety import untrusted


class Edited(Protocol):
    """What `finish` needs to know about the file it writes."""

    @property
    def target(self) -> str: ...
    @property
    def shown(self) -> str: ...
    @property
    def path(self) -> Path: ...


@dataclass(slots=True)
class Result:
    """What one command did (or would do, with --dry-run) to one file."""

    target: str
    file: str
    action: str
    """added, updated, unchanged, removed, absent, skipped, printed, foreign, error"""
    message: str = ""
    diff: str = ""
    step: str = ""
    """The host-side step still needed before the host uses this entry (steps.py), one line."""

    @property
    def failed(self) -> bool:
        return self.action in ("foreign", "error")

    def line(self) -> str:
        return f"{self.target}: {self.file}: {self.action}" + (f" ({self.message})" if self.message else "")


def _link_target(path: Path) -> str:
    try:
        return untrusted.line(os.readlink(path))
    except OSError:
        return "?"


def read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        if path.is_symlink():
            raise HostError(
                "ENGRAM_HOST_LINK",
                f"is a symbolic link to {_link_target(path)}, which does not exist; left untouched "
                "(create the file it points to, or remove the link, then run the command again)",
            ) from None
        return None
    except IsADirectoryError:
        raise HostError("ENGRAM_HOST_PARSE", "is a folder, not a file; left untouched") from None
    except UnicodeDecodeError:
        raise HostError("ENGRAM_HOST_PARSE", "not UTF-8 text; left untouched") from None


def link_outside(path: Path, base: Path) -> str | None:
    """Why a workspace file that is a symbolic link may not be written through, or None: its
    target lies outside the workspace (a cloned repository could point `.cursor/mcp.json` at
    any file of the user's and have `engram link` write into it)."""
    if not path.is_symlink():
        return None
    try:
        inside = path.resolve().is_relative_to(base.resolve())
    except (OSError, RuntimeError):  # a loop of links
        inside = False
    if inside:
        return None
    return (
        f"is a symbolic link to {_link_target(path)}, outside this workspace; left untouched (a "
        "repository must not send engram's writes elsewhere: replace the link with a file, or edit "
        "the file it points to yourself)"
    )


def backup_path(path: Path) -> Path:
    """Where the one `.bak` of a host file's original is kept."""
    return path.with_name(path.name + ".bak")


def prune_empty(folder: Path, base: Path) -> None:
    """Remove `folder` and its parents while they are empty, stopping below `base` (the folders
    a removed file of engram's left behind)."""
    while folder != base and folder.is_relative_to(base):
        try:
            folder.rmdir()
        except OSError:  # not empty (or not ours to remove): stop here
            return
        folder = folder.parent


def real_path(path: Path) -> Path:
    """The file a write lands in: `path`, or the file its symbolic link points to (the link stays)."""
    return path.resolve() if path.is_symlink() else path


def write(host_path: Path, before: str | None, after: str | None) -> None:
    """Atomic write keeping the mode; one `.bak` of the original on the first change.

    `after` None removes a file engram itself created (no backup is kept of that). Through a
    symbolic link, the target is written and the link stays."""
    if after is None and host_path.is_symlink():
        after = ""  # never remove a link the user made (callers keep its text; this is the floor)
    if after is None:
        host_path.unlink(missing_ok=True)
        folder = host_path.parent
        if folder.name.startswith(".") and folder != Path.home() and not any(folder.iterdir()):
            folder.rmdir()  # an emptied host folder such as .claude/ that link created
        return
    backup = backup_path(host_path)
    target = real_path(host_path)
    clean_stale_temps(target.parent, prefix=f".{target.name}.")
    mode = None
    if before is not None:
        mode = target.stat().st_mode & 0o7777
        if not backup.exists():
            write_atomic(backup, target.read_bytes(), mode=mode)
    write_atomic(target, after.encode("utf-8"), mode=mode)


def diff(path: str, before: str | None, after: str | None) -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True), path, path
    )
    return "".join(lines)


def finish(
    host: Edited, before: str | None, after: str | None, action: str, dry_run: bool, message: str = ""
) -> Result:
    if after == before:
        return Result(host.target, host.shown, "unchanged" if action != "removed" else "absent", message)
    if not dry_run:
        host.path.parent.mkdir(parents=True, exist_ok=True)
        write(host.path, before, after)
    return Result(host.target, host.shown, action, message, diff(host.shown, before, after))
