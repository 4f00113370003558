"""Fetch counts per memory id in `usage.json`, batched and written under the workspace lock.

usage.json ranks resources, so it carries a tag keyed by the per-user secret (SPEC §2): counts
in a file without a valid tag (one that came with a clone) are discarded, with a notice, and the
next flush writes this process's counts in a tagged file.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Final

import orjson

from store.errors import Busy, ReadOnly, UnsafePath, Untrusted
from store.files import sealed
from store.files.fsutil import read_regular, write_atomic
from store.files.lock import workspace_lock
from store.files.workspace import ScopeDir, check_scope

FLUSH_INTERVAL_SECONDS: Final = 1.0
KIND: Final = "usage"
MAX_BYTES: Final = 64 << 20


class Usage:
    def __init__(
        self,
        scope: ScopeDir,
        *,
        enabled: bool,
        clock: Callable[[], float] = time.monotonic,
        key: Callable[[], bytes] = lambda: b"",
        notice: Callable[[str, str], None] = lambda code, message: None,
    ) -> None:
        self._scope = scope
        self._enabled = enabled
        self._clock = clock
        self._key = key
        self._notice = notice
        self._pending: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._last_flush = clock()

    def _stored(self) -> Counter[str]:
        """The counts engram recorded; an untrusted or unreadable file counts as none."""
        path = self._scope.usage_path
        try:
            raw = read_regular(path, MAX_BYTES)
        except FileNotFoundError:
            return Counter()
        except OSError:
            raw = b""
        try:
            stored = sealed.load_object(self._key(), KIND, raw)
        except Untrusted:
            stored = None
        if stored is None:
            self._notice(
                "ENGRAM_UNTRUSTED",
                f"{self._scope.display(path)}: carries no valid tag of this user's engram (it may have "
                "come with a clone); its counts were discarded",
            )
            return Counter()
        return Counter(
            {
                k: v
                for k, v in stored.items()
                if k != "_tag" and isinstance(v, int) and not isinstance(v, bool)
            }
        )

    def counts(self) -> dict[str, int]:
        """Stored counts plus this process's unflushed ones."""
        counts = self._stored()
        with self._lock:
            counts.update(self._pending)
        return dict(counts)

    def record(self, memory_id: str) -> None:
        if not self._enabled:
            return
        with self._lock:
            self._pending[memory_id] += 1
            due = self._clock() - self._last_flush >= FLUSH_INTERVAL_SECONDS
        if due:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            if not self._pending or not self._scope.root.is_dir():
                return
            pending, self._pending = self._pending, Counter()
            self._last_flush = self._clock()
        try:
            check_scope(self._scope)
            with workspace_lock(self._scope.lock_path):
                merged = self._stored()
                merged.update(pending)
                payload = orjson.dumps(dict(sorted(merged.items())))
                write_atomic(self._scope.usage_path, sealed.seal(self._key(), KIND, payload))
        except UnsafePath:
            return  # never written through a link; the counts are only a ranking hint
        except (Busy, ReadOnly, OSError):  # ReadOnly: a sandbox's read-only mount
            with self._lock:
                self._pending.update(pending)  # keep them for the next flush
