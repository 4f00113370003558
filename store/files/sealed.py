"""The one layout of every file engram derives or keeps for itself, sealed with the per-user key.

The rest, and why: docs/design.md, `store/files/sealed.py`.
"""

from __future__ import annotations

import hashlib
import hmac
import mmap
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import orjson

from store.errors import Untrusted
from store.files.fsutil import open_regular

_HEAD: Final = b'{"_tag":"'
_HEX: Final = 64
_AT: Final = len(_HEAD) + _HEX
"""Where the joint after the tag begins: `",` (object members), `"}` (an empty object) or
`"}\\n` (a binary payload)."""
_BINARY: Final = b'"}\n'
_EARLIER_VECTORS: Final = b"ENGRAM-VEC-1\n"
_EARLIER_TRAILER: Final = b"\nENGRAM-TAG "
"""The layouts an earlier engram sealed its binary files in: vectors began with this line and
their tag, the search index ended with this and its tag, each keyed as `tag` keys. A file in
one of them whose tag holds for this user and kind is rebuilt, not reported; one that only
looks like it was planted, and is reported like any other."""
PIECE: Final = 1 << 22
"""Bytes hashed at a time (a multiple of any page size)."""


def tag(key: bytes, kind: str, data: bytes | memoryview) -> str:
    """HMAC-SHA256 of `data`, bound to the kind of file (a tag of one kind never fits another)."""
    return tag_chunks(key, kind, (data,))


def tag_chunks(key: bytes, kind: str, chunks: Iterable[bytes | memoryview]) -> str:
    """`tag` of the chunks' bytes one after the other (a large file, a piece at a time)."""
    mac = hmac.new(key, kind.encode() + b"\0", hashlib.sha256)
    for chunk in chunks:
        mac.update(chunk)
    return mac.hexdigest()


def valid(key: bytes, kind: str, data: bytes | memoryview, found: object) -> bool:
    return matches(found, tag(key, kind, data))


def matches(found: object, expected: str) -> bool:
    """Whether a tag read from a file is `expected`, in constant time (see `found_bytes`)."""
    return hmac.compare_digest(found_bytes(found), expected.encode())


def found_bytes(found: object) -> bytes:
    """A tag read from a file, as bytes to compare: the file may hold anything, and a non-ASCII
    string (which `hmac.compare_digest` refuses to compare as text, raising) or no string at
    all is simply not the tag (b"" never matches)."""
    if isinstance(found, str):
        return found.encode("utf-8", "surrogatepass")
    return found if isinstance(found, bytes) else b""


def seal(key: bytes, kind: str, payload: bytes) -> bytes:
    """A JSON object's bytes with its tag as the first member `_tag` (the file stays JSON)."""
    if not payload.startswith(b"{"):
        raise ValueError("only a JSON object is sealed as JSON (seal_binary for other bytes)")
    rest = payload[1:]
    joint = b'"' if rest.lstrip().startswith(b"}") else b'",'
    return _HEAD + tag(key, kind, payload).encode() + joint + rest


def seal_binary(key: bytes, kind: str, payload: bytes) -> bytes:
    """Any bytes after a one-line tag header."""
    return _HEAD + tag(key, kind, payload).encode() + _BINARY + payload


def load_object(key: bytes, kind: str, data: bytes) -> Any:
    """The JSON object `seal` made with this key and kind, parsed (Untrusted for anything
    else). The stored bytes are parsed as they are, `_tag` dropped: no copy of the payload."""
    joint = data[_AT : _AT + 2]
    if not data.startswith(_HEAD) or joint[:1] != b'"':
        raise _rejected(data, key, kind)
    members = memoryview(data)[_AT + 2 if joint == b'",' else _AT + 1 :]
    if not matches(data[len(_HEAD) : _AT], tag_chunks(key, kind, (b"{", members))):
        raise Untrusted("its tag does not match")
    try:
        loaded = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise Untrusted(f"unreadable ({exc})") from exc
    if not isinstance(loaded, dict):  # the tag held, so engram never wrote this
        raise Untrusted("not an object")
    loaded.pop("_tag", None)
    return loaded


def unseal(key: bytes, kind: str, data: bytes) -> bytes | None:
    """The payload bytes `seal` made with this key and kind; None for anything else (a small
    file's bytes, copied: `load_object` reads a large one)."""
    if not data.startswith(_HEAD):
        return None
    rest = data[_AT:]
    payload = b"{" + (rest[2:] if rest.startswith(b'",') else rest[1:])
    if not rest.startswith(b'"') or not valid(key, kind, payload, data[len(_HEAD) : _AT]):
        return None
    return payload


def unseal_binary(key: bytes, kind: str, data: Any, *, piece: int = PIECE) -> memoryview:
    """The payload `seal_binary` made with this key and kind, as a view of `data` (bytes or a
    read-only mmap, whose hashed pages are let go as it goes); Untrusted for anything else."""
    view = memoryview(data)
    if bytes(view[: len(_HEAD)]) != _HEAD or bytes(view[_AT : _AT + len(_BINARY)]) != _BINARY:
        view.release()
        raise _rejected(data, key, kind)
    start = _AT + len(_BINARY)
    body = view[start:]

    def pieces() -> Iterator[memoryview]:
        for lo in range(0, len(body), piece):
            hi = min(lo + piece, len(body))
            yield body[lo:hi]
            if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
                # whole pages only: the first page also holds the header
                first = (start + lo) // mmap.PAGESIZE * mmap.PAGESIZE
                data.madvise(mmap.MADV_DONTNEED, first, start + hi - first)

    if not matches(bytes(view[len(_HEAD) : _AT]), tag_chunks(key, kind, pieces())):
        body.release()
        view.release()
        raise Untrusted("its tag does not match")
    return body


def map_binary(path: Path, key: bytes, kind: str, *, piece: int = PIECE) -> memoryview:
    """`unseal_binary` of a file mapped read-only: a regular file, never through a link
    (FileNotFoundError when absent, NotRegular for anything else, Untrusted as above)."""
    fd = open_regular(path)
    try:
        if os.fstat(fd).st_size == 0:
            raise Untrusted("empty")
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    return unseal_binary(key, kind, mapped, piece=piece)


def _rejected(data: Any, key: bytes, kind: str) -> Untrusted:
    """Untrusted; stale when `data` (bytes or a mmap) is this kind's file in the layout an
    earlier engram wrote, sealed with this user's key."""
    if _earlier_seal_holds(data, key, kind):
        return Untrusted("written by an earlier engram", stale=True)
    return Untrusted("not sealed by engram")


def _earlier_seal_holds(data: Any, key: bytes, kind: str) -> bool:
    view = memoryview(data)
    size = len(view)
    try:
        if kind == "vectors":
            at = len(_EARLIER_VECTORS)
            if bytes(view[:at]) != _EARLIER_VECTORS or bytes(view[at + _HEX : at + _HEX + 1]) != b"\n":
                return False
            found, start, end = bytes(view[at : at + _HEX]), at + _HEX + 1, size
        elif kind == "search.idx":
            trailer = len(_EARLIER_TRAILER) + _HEX
            if size < trailer or bytes(view[size - trailer : size - _HEX]) != _EARLIER_TRAILER:
                return False
            found, start, end = bytes(view[size - _HEX :]), 0, size - trailer
        else:
            return False

        def pieces() -> Iterator[bytes]:
            for lo in range(start, end, PIECE):
                yield bytes(view[lo : min(lo + PIECE, end)])

        return matches(found, tag_chunks(key, kind, pieces()))
    finally:
        view.release()
