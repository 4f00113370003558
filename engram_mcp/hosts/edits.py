"""The file edits every host change goes through: read, atomic write with one backup, diff, and
the per-file `Result` that `link`, `unlink`, `upgrade` and `doctor` report.

The rest, and why: docs/design.md, `engram_mcp/hosts/edits.py`.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from engram_mcp.hosts.errors import HostError
from store.errors import NotRegular
from store.files.fsutil import clean_stale_temps, read_regular, write_atomic
from store.files.workspace import engram_home
from store.safety import untrusted

BACKUPS: Final = "backups"
"""The folder of `$ENGRAM_HOME` holding the originals of host files engram changed."""

UNREADABLE: Final = "ENGRAM_HOST_UNREADABLE"
"""A host file that is not a regular file of at most the cap, or cannot be read at all."""

HOST_FILE_LIMIT: Final = 16 * 1024 * 1024
"""The most bytes read of one host file (16 MiB): a config, a rule file, a command file is a
few kilobytes; a larger one is refused rather than read into memory."""

CLAUDE_STATE_LIMIT: Final = 256 * 1024 * 1024
"""The most bytes read of `~/.claude.json` (256 MiB): Claude Code keeps every project's state
and history there, which legitimately grows to many megabytes."""


class Edited(Protocol):
    """What `finish` needs to know about the file it writes."""

    @property
    def target(self) -> str: ...
    @property
    def shown(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def scope(self) -> str: ...


@dataclass(slots=True)
class Result:
    """What one command did (or would do, with --dry-run) to one file."""

    target: str
    file: str
    action: str
    """added, updated, unchanged, removed, restored (unlink gave back the original bytes), absent,
    skipped, printed, foreign, error"""
    message: str = ""
    diff: str = ""
    step: str = ""
    """The host-side step still needed before the host uses this entry (steps.py), one line."""
    code: str = ""
    """For a failed file, the stable code of why (ENGRAM_HOST_PARSE, …), when there is one."""

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


def read_bytes(path: Path, limit: int = HOST_FILE_LIMIT) -> bytes | None:
    """The bytes of host file `path` (through its link, if it is one), or None when it is absent.

    Raises:
        HostError: ENGRAM_HOST_LINK for a link to nothing; ENGRAM_HOST_UNREADABLE for a folder,
            FIFO, device or socket, a loop of links, a file over `limit` bytes, or any other
            failure to read; the message ends in "left untouched"."""
    try:
        return read_regular(path, limit, follow=True)
    except FileNotFoundError:
        if path.is_symlink():
            raise HostError(
                "ENGRAM_HOST_LINK",
                f"is a symbolic link to {_link_target(path)}, which does not exist; left untouched "
                "(create the file it points to, or remove the link, then run the command again)",
            ) from None
        return None
    except NotRegular as exc:
        if exc.errno == errno.ELOOP:
            why = "is a loop of symbolic links, not a file"
        elif os.path.isdir(path):
            why = "is a folder, not a file"
        elif exc.errno == errno.EFBIG:
            why = f"is larger than {limit // (1024 * 1024)} MiB, more than a host config holds"
        else:
            why = "is not a regular file (a folder, FIFO, device or socket)"
        raise HostError(UNREADABLE, f"{why}; left untouched") from None
    except OSError as exc:
        reason = untrusted.line(exc.strerror or exc)
        raise HostError(UNREADABLE, f"cannot be read ({reason}); left untouched") from None


def read(path: Path, limit: int = HOST_FILE_LIMIT) -> str | None:
    """Host file `path` as text (`read_bytes`), or None when it is absent.

    Raises:
        HostError: as `read_bytes`, and ENGRAM_HOST_PARSE for bytes that are not UTF-8."""
    data = read_bytes(path, limit)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        raise HostError("ENGRAM_HOST_PARSE", "not UTF-8 text; left untouched") from None


def read_quietly(path: Path, limit: int = HOST_FILE_LIMIT) -> str | None:
    """`read`, with None for a file that cannot be read too (the audits only look)."""
    try:
        return read(path, limit)
    except HostError:
        return None


def link_outside(path: Path, base: Path) -> str | None:
    """Why workspace file `path` may not be written, removed or restored, or None: it, or a
    folder above it, is a symbolic link whose target lies outside the workspace `base` (a cloned
    repository could point `.cursor/mcp.json` at any file of the user's, or `.claude` at
    `~/.claude`, and have `engram link` write there, or `engram unlink` remove from there)."""
    root = Path(os.path.realpath(base))
    folder = Path(os.path.realpath(path.parent))
    where = folder / path.name
    if where.is_relative_to(root) and Path(os.path.realpath(path)).is_relative_to(root):
        return None
    if path.is_symlink() and where.is_relative_to(root):
        return (
            f"is a symbolic link to {_link_target(path)}, outside this workspace; left untouched (a "
            "repository must not send engram's writes elsewhere: replace the link with a file, or "
            "edit the file it points to yourself)"
        )
    return (
        f"lies in {untrusted.line(folder)} through a symbolic link, outside this workspace; left "
        "untouched (a repository must not send engram's writes elsewhere: replace the linked "
        "folder with a real one, or edit that file yourself)"
    )


def backup_path(path: Path) -> Path:
    """Where the backup of a host file's original is kept: `$ENGRAM_HOME/backups/<key>-<name>`,
    `key` a hash of the file's absolute path (its folder resolved, the file itself not, so a
    symlinked config is keyed by its link), so two projects' `.mcp.json` never share one."""
    absolute = Path(os.path.realpath(path.parent)) / path.name
    key = hashlib.sha256(os.fsencode(absolute)).hexdigest()[:16]
    return engram_home() / BACKUPS / f"{key}-{path.name}"


def legacy_backup(path: Path) -> Path:
    """Where engram kept the backup before backups moved to $ENGRAM_HOME: `X.bak` beside the file."""
    return path.with_name(path.name + ".bak")


def _backups(path: Path, in_workspace: bool) -> list[Path]:
    """The backups that may hold `path`'s original, first found wins: engram's under
    `$ENGRAM_HOME`, else (outside a workspace, for a file no engram since backups moved has changed:
    no created mark either) an older engram's `.bak` beside it, read only. A `.bak` beside a
    workspace file is the repository's, never one of them."""
    if in_workspace or recorded(path):
        return [backup_path(path)]
    return [backup_path(path), legacy_backup(path)]


def original(path: Path, *, in_workspace: bool) -> str | None:
    """`path`'s text before engram first changed it (its backup), or None."""
    for backup in _backups(path, in_workspace):
        try:
            text = read(backup)
        except HostError:
            continue
        if text is not None:
            return text
    return None


def has_original(path: Path, *, in_workspace: bool) -> bool:
    return any(os.path.lexists(backup) for backup in _backups(path, in_workspace))


def created_mark(path: Path) -> Path:
    """Beside where `path`'s backup would be: engram created `path`, so it has no original (a
    later re-pin must not keep engram's own first text as one, or unlink would keep it)."""
    backup = backup_path(path)
    return backup.with_name(backup.name + ".created")


def recorded(path: Path) -> bool:
    """Whether engram keeps a record of `path`'s original under `$ENGRAM_HOME`: its backup, or
    the mark that engram created it (an `X.bak` beside it is no record)."""
    return os.path.lexists(backup_path(path)) or os.path.lexists(created_mark(path))


def only_created(path: Path) -> bool:
    """Whether engram's record of `path` is the created mark alone (no backup of an original)."""
    return os.path.lexists(created_mark(path)) and not os.path.lexists(backup_path(path))


def keep_as_original(path: Path, data: bytes) -> None:
    """Save `data` as `path`'s original unless a backup of it is kept already; a created mark
    there is dropped: it is stale (the file engram made was removed, and this one is someone
    else's), and unlink trusting it would delete the file, with no backup."""
    if not os.path.lexists(backup_path(path)):
        created_mark(path).unlink(missing_ok=True)
        save_backup(path, data)


def mark_created(path: Path) -> None:
    backup_path(path).unlink(missing_ok=True)  # of a file no longer there: moot
    save_backup(path, b"", created=True)


def drop_backup(path: Path, *, in_workspace: bool) -> None:
    """Remove `path`'s backup (or created mark) under `$ENGRAM_HOME` once unlink has used it; an
    `X.bak` beside the file is never removed (it may be the user's own copy). `in_workspace` is
    kept for the callers' symmetry with `original`."""
    for backup in (backup_path(path), created_mark(path)):
        backup.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # the last backup gone: no empty folder stays
        backup_path(path).parent.rmdir()


def planted_backup(path: Path, base: Path) -> Path | None:
    """An `X.bak` beside workspace file `path`: an older engram's backup or a file a clone
    planted; engram neither restores nor removes it (unlink names it)."""
    legacy = legacy_backup(path)
    return legacy if os.path.lexists(legacy) and legacy.parent.is_relative_to(base) else None


def save_backup(path: Path, data: bytes, *, created: bool = False) -> None:
    """Keep `data` as `path`'s original (`created`: the mark that engram made it), in a folder
    only the user can read (a host config may hold tokens in its `env`)."""
    backup = created_mark(path) if created else backup_path(path)
    backup.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic(backup, data, mode=0o600)


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


def write(host_path: Path, before: str | None, after: str | None, *, in_workspace: bool) -> None:
    """Atomic write keeping the mode; one backup of the original on the first change
    (`backup_path`), or the mark that engram created the file (`created_mark`).

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
    target = real_path(host_path)
    clean_stale_temps(target.parent, prefix=f".{target.name}.")
    mode = None
    if before is None:
        mark_created(host_path)
    else:
        mode = target.stat().st_mode & 0o7777
        if not recorded(host_path):  # a `.bak` beside it is no record: this first change makes one
            save_backup(host_path, before.encode("utf-8"))
        elif only_created(host_path) and "engram" not in before:
            keep_as_original(host_path, before.encode("utf-8"))  # a stale mark: no file of ours
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
    in_workspace = host.scope == "workspace"
    if action == "removed":
        kept = original(host.path, in_workspace=in_workspace)
        action = "restored" if after is not None and after == kept else "removed"
    if not dry_run:
        host.path.parent.mkdir(parents=True, exist_ok=True)
        write(host.path, before, after, in_workspace=in_workspace)
        if action in ("removed", "restored"):
            drop_backup(host.path, in_workspace=in_workspace)
    return Result(host.target, host.shown, action, message, diff(host.shown, before, after))
