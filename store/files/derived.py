"""A file engram derives from the memories and seals with the per-user key (`search.idx`,
`vectors.bin`): read only when its tag is this user's engram's, otherwise discarded, said once
and rebuilt; written atomically, never through a link, and a write that fails is said once and
retried at the next save. What the file holds is its owner's (store.search.lexical,
store.search.vectors): this is the one way such a file is opened, refused and written."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from store.errors import Untrusted
from store.files.fsutil import write_atomic

log = logging.getLogger("engram.store")

T = TypeVar("T")


class DerivedFile:
    def __init__(
        self,
        path: Path | None,
        *,
        writable: bool,
        key: Callable[[], bytes],
        notice: Callable[[str, str], None],
    ) -> None:
        self.path = path
        self.writable = writable
        self.key = key
        self._notice = notice
        self.dirty = False
        """What is held differs from the file (or the file was refused): the next save writes it."""
        self._said_unwritable = False

    def load(self, read: Callable[[Path, bytes], T]) -> T | None:
        """`read(path, key)`, or None when there is no file or it was refused (then it is
        rewritten at the next save, and a refusal is noticed: a file that does not check may have
        come with a clone)."""
        if self.path is None:
            return None
        name = f".engram/{self.path.name}"
        try:
            return read(self.path, self.key())
        except FileNotFoundError:
            return None
        except Untrusted as exc:
            self.dirty = True
            if not exc.stale:  # an earlier engram's layout is derived data, rebuilt quietly
                self._notice(
                    "ENGRAM_UNTRUSTED",
                    f"{name}: carries no valid tag of this user's engram (it may have come with a "
                    "clone); discarded and rebuilt from the memories",
                )
        except OSError as exc:
            self.dirty = True
            log.warning("%s unreadable (%s); rebuilding", name, exc)
            self._notice("ENGRAM_UNTRUSTED", f"{name} not read ({exc}); rebuilt")
        except (ValueError, KeyError, TypeError) as exc:
            self.dirty = True
            log.warning("%s discarded (%s); rebuilding", name, exc)
            self._notice("ENGRAM_UNTRUSTED", f"{name} discarded ({exc}); rebuilt")
        return None

    def may_write(self) -> bool:
        """Whether a save may write it: a path, a writable store, its folder there, no link."""
        return (
            self.path is not None
            and self.writable
            and self.path.parent.is_dir()
            and not self.path.is_symlink()
        )

    def write(self, data: bytes) -> None:
        assert self.path is not None
        try:
            write_atomic(self.path, data)
            self.dirty = False
        except OSError as exc:
            self.dirty = True
            if not self._said_unwritable:  # once: a folder or a read-only .engram stays in the way
                self._said_unwritable = True
                log.warning("%s not written (%s): remove what is in its place", self.path.name, exc)
