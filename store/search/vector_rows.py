"""What is done with window vectors apart from the index (store.search.vectors): the sealed file
they are kept in (`.engram/vectors.bin`), and the nearest pairs within a group."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import orjson

from store.files import sealed

if TYPE_CHECKING:
    import numpy.typing as npt

    from store.search.embedders import Model

    Matrix = npt.NDArray[np.float32]
    Rows = npt.NDArray[np.float16] | npt.NDArray[np.float32]

Key = tuple[str, str, str]
"""(scope, tier, id), as in store.search."""

KIND: Final = "vectors"
"""The seal's kind (store.files.sealed): an HMAC keyed by the per-user secret, so a torn, edited, or
planted file (one that arrived with a clone) is discarded and rebuilt."""


_NEIGHBOUR_ROWS: Final = 512
"""Windows compared with all of a group's at once by `closest_pairs` (512 × 15,000 float32 cosines:
31 MB)."""


def closest_pairs(copied: list[tuple[list[Key], Matrix, Any]], top: int) -> dict[tuple[Key, Key], float]:
    """For each group (its keys, their windows' rows, each key's number of rows), each memory's
    `top` nearest of the group as (key, other) → the cosine of their closest windows, each pair
    once (key < other); a block of rows at a time against all of them, so memory stays bounded."""
    found: dict[tuple[Key, Key], float] = {}
    for keys, rows, sizes in copied:
        starts = np.cumsum(sizes) - sizes
        wanted = min(top, len(keys) - 1)
        first = 0
        while first < len(keys):  # memories first..last-1, about _NEIGHBOUR_ROWS windows
            last = int(np.searchsorted(np.cumsum(sizes[first:]), _NEIGHBOUR_ROWS, side="right")) + first
            last = max(last, first + 1)
            low, high = int(starts[first]), int(starts[last - 1] + sizes[last - 1])
            cosines = np.maximum.reduceat(rows[low:high] @ rows.T, starts, axis=1)
            best = np.maximum.reduceat(cosines, starts[first:last] - low, axis=0)
            best[np.arange(last - first), np.arange(first, last)] = -np.inf  # not itself
            nearest = np.argpartition(-best, wanted - 1, axis=1)[:, :wanted]
            for n, others in enumerate(nearest.tolist()):
                for other in others:
                    a, b = sorted((keys[first + n], keys[other]))
                    found[(a, b)] = round(float(best[n, other]), 6)
            first = last
    return found


def encode(by_hash: Mapping[str, Rows], model: Model, key: bytes) -> bytes:
    """Sealed (store.files.sealed): header length, JSON header, float16 rows."""
    hashes = sorted(by_hash)
    header = orjson.dumps(
        {"model": model.fingerprint, "dim": model.dim, "entries": [[h, len(by_hash[h])] for h in hashes]}
    )
    rows = [by_hash[h].astype(np.float16).tobytes() for h in hashes]
    return sealed.seal_binary(key, KIND, b"".join([len(header).to_bytes(8, "little"), header, *rows]))


def decode(data: bytes, model: Model, key: bytes) -> dict[str, Rows]:
    """The inverse of `encode`: Untrusted for a file this user's engram did not seal (stale
    for an earlier layout), ValueError for one that is torn or from another model."""
    body = sealed.unseal_binary(key, KIND, data)  # a view: no copy
    size = int.from_bytes(body[:8], "little")
    try:
        header = orjson.loads(body[8 : 8 + size])
        if header["model"] != model.fingerprint or header["dim"] != model.dim:
            raise ValueError("made by another model")
        entries = [(str(h), int(n)) for h, n in header["entries"]]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"unreadable header ({exc})") from exc
    matrix = np.frombuffer(body, dtype=np.float16, offset=8 + size).reshape(-1, model.dim)
    if sum(n for _, n in entries) != len(matrix) or (len(body) - 8 - size) % (2 * model.dim):
        raise ValueError("sizes do not add up")
    out: dict[str, Rows] = {}
    row = 0
    for content_hash, count in entries:  # float16 views of the file: widened once, into the matrix
        out[content_hash] = matrix[row : row + count]
        row += count
    return out
