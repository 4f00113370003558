"""Fetch counts per memory id in `usage.json`, batched and written under the workspace lock."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Final

import orjson

from store.errors import Busy
from store.fsutil import workspace_lock, write_atomic
from store.workspace import ScopeDir

FLUSH_INTERVAL_SECONDS: Final = 1.0


class Usage:
    def __init__(
        self, scope: ScopeDir, *, enabled: bool, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._scope = scope
        self._enabled = enabled
        self._clock = clock
        self._pending: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._last_flush = clock()

    def counts(self) -> dict[str, int]:
        """Stored counts plus this process's unflushed ones."""
        try:
            stored = orjson.loads(self._scope.usage_path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            stored = {}
        counts = Counter(
            {k: v for k, v in stored.items() if isinstance(v, int)} if isinstance(stored, dict) else {}
        )
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
            with workspace_lock(self._scope.lock_path):
                try:
                    stored = orjson.loads(self._scope.usage_path.read_bytes())
                except (OSError, orjson.JSONDecodeError):
                    stored = {}
                merged = Counter({k: v for k, v in stored.items() if isinstance(v, int)})
                merged.update(pending)
                write_atomic(self._scope.usage_path, orjson.dumps(dict(sorted(merged.items()))))
        except (Busy, OSError):
            with self._lock:
                self._pending.update(pending)  # keep them for the next flush
