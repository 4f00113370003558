"""Line framing: bytes in, dicts out. One JSON message per line, UTF-8, flushed per message."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any, Final, Protocol

import orjson

MAX_LINE_BYTES: Final = 4 * 1024 * 1024
"""A line longer than this is refused with -32600 and skipped (SPEC §6)."""

_CHUNK: Final = 1 << 20


class Oversized:
    """Marker yielded instead of a line that was longer than `MAX_LINE_BYTES`."""


OVERSIZED: Final = Oversized()


def read_lines(stream: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes | Oversized]:
    """Yield each line (without its newline); an over-long line is drained and yields OVERSIZED."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        complete = line.endswith(b"\n")
        body = line.rstrip(b"\r\n")
        if len(body) <= limit:
            yield body
            continue
        if not complete:
            while (rest := stream.readline(_CHUNK)) and not rest.endswith(b"\n"):
                pass
        yield OVERSIZED


class ByteSink(Protocol):
    """What the wire is written to: a binary stream, or anything that writes and flushes bytes."""

    def write(self, data: bytes, /) -> int: ...

    def flush(self) -> None: ...


class Writer:
    """Serialises messages to the wire, one line each, from any thread."""

    def __init__(self, stream: ByteSink) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: Any) -> None:
        data = orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
        with self._lock:
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the client went away; the reader sees EOF and we shut down


def claim_stdio() -> tuple[IO[bytes], IO[bytes]]:
    """Take the real stdin/stdout for the wire and point everything else at stderr.

    fd 1 is duplicated for the wire and then replaced by fd 2, so a stray `print`, a C
    extension or a child process writing to "stdout" lands on stderr, never on the wire.
    """
    sys.stdout.flush()
    wire_fd = os.dup(1)
    os.dup2(2, 1)
    wire_out = os.fdopen(wire_fd, "wb", buffering=0)
    sys.stdout = sys.stderr
    return sys.stdin.buffer, wire_out
