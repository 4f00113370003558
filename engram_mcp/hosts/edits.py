"""The file edits every host change goes through: read, atomic write with one `.bak`, diff, and
the per-file `Result` that `link`, `unlink`, `upgrade` and `doctor` report."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from store.fsutil import clean_stale_temps, write_atomic


class Edited(Protocol):
    """What `finish` needs to know about the file it writes."""

    @property
    def target(self) -> str: ...
    @property
    def shown(self) -> str: ...
    @property
    def path(self) -> Path: ...


class HostError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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


def read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise HostError("ENGRAM_HOST_PARSE", "not UTF-8 text; left untouched") from None


def write(host_path: Path, before: str | None, after: str | None) -> None:
    """Atomic write keeping the mode; one `.bak` of the original on the first change.

    `after` None removes a file engram itself created (no backup is kept of that)."""
    if after is None:
        host_path.unlink(missing_ok=True)
        folder = host_path.parent
        if folder.name.startswith(".") and folder != Path.home() and not any(folder.iterdir()):
            folder.rmdir()  # an emptied host folder such as .claude/ that link created
        return
    backup = host_path.with_name(host_path.name + ".bak")
    clean_stale_temps(host_path.parent, prefix=f".{host_path.name}.")
    mode = None
    if before is not None:
        mode = host_path.stat().st_mode & 0o7777
        if not backup.exists():
            write_atomic(backup, host_path.read_bytes(), mode=mode)
    write_atomic(host_path, after.encode("utf-8"), mode=mode)


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
