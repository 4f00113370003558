"""Calls that could block on a planted non-regular file (a FIFO where engram expects a file):
run them so that a hang fails the test instead of the suite."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


def in_thread(run: Callable[[], Any], timeout: float = 5.0) -> Any:
    """`run()` in a thread; fails (instead of hanging the suite) when it has not returned in time."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = run()
        except BaseException as exc:  # reported below
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), "the call hung on a non-regular file"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def release_fifo(path: Path) -> None:
    """Unblock a reader stuck in open() on a FIFO (so a failing test leaves no thread behind)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)
