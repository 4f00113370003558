"""index.json's records in columns: one list per field, a row per memory file.

A new process takes in a store from the columns without decoding a record per file: each row
gives a deferred memory (store.files.memory.Memory.deferred) holding the fields every read of
the whole store asks, and its record's JSON text, decoded when a read first needs the rest.
The columns are checked with index.json's one tag (store.read.index_file); their lengths and
kinds are checked here, so a file that does not add up is refused as a whole, never half used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from store.files.memory import LAZY_FIELDS, RECORD_FIELDS

EAGER: Final = ("hash", "type", "status", "valid_until", "superseded_by")
"""A row's fields a deferred memory holds from the start (Memory.deferred's order)."""
_INTEGERS: Final = ("mtime_ns", "size", "inode")
_TEXTS: Final = ("key", *EAGER, "r")
FIELDS: Final = (*_INTEGERS, *_TEXTS, "sealed")


class Columns:
    """The rows of one index.json: `key` (tier/id), the file's `mtime_ns`, `size` and `inode`
    when it was read, its `sealed` hash ("" for none), the `EAGER` fields and `r`, the record's
    JSON text."""

    def __init__(self, columns: Mapping[str, list[Any]]) -> None:
        self.key: list[str] = columns["key"]
        self.mtime_ns: list[int] = columns["mtime_ns"]
        self.size: list[int] = columns["size"]
        self.inode: list[int] = columns["inode"]
        self.sealed: list[str] = columns["sealed"]
        self.eager: list[list[str]] = [columns[name] for name in EAGER]
        self.r: list[str] = columns["r"]

    def __len__(self) -> int:
        return len(self.key)

    def keep_records_only(self) -> None:
        """Let go of every column but the records' texts once each row is a memory: the
        memories hold their own fields, and a 100,000-row index's other lists are tens of MB."""
        self.key, self.mtime_ns, self.size, self.inode, self.sealed = [], [], [], [], []
        self.eager = [[] for _ in EAGER]

    @classmethod
    def parse(cls, found: object) -> Columns:
        """The columns of a decoded index.json; ValueError when they do not add up (a list
        missing, of another length, or holding a value of the wrong kind at either end: the tag
        held, so only engram wrote it, and a whole check would cost a pass over every value)."""
        if not isinstance(found, dict):
            raise ValueError("no columns")
        lengths = set()
        for name in FIELDS:
            column = found.get(name)
            if not isinstance(column, list):
                raise ValueError(f"column {name} missing")
            lengths.add(len(column))
            kind = int if name in _INTEGERS else str
            if column and not (isinstance(column[0], kind) and isinstance(column[-1], kind)):
                raise ValueError(f"column {name} holds the wrong kind of value")
        if len(lengths) != 1:
            raise ValueError("columns of different lengths")
        if len(set(found["key"])) != len(found["key"]):
            raise ValueError("a key in two rows")
        return cls(found)

    def eager_of(self, row: int) -> tuple[str, ...]:
        return tuple(column[row] for column in self.eager)

    def record(self, row: int) -> list[Any]:
        """The row's `LAZY_FIELDS` values."""
        value = orjson.loads(self.r[row])
        if not isinstance(value, list):
            raise ValueError("a record that is not a list")
        return value

    def record_bytes(self, row: int) -> bytes:
        return self.r[row].encode()

    def stored(self, row: int) -> dict[str, Any]:
        """The row as index.json's earlier layout held a record (what verify and a flush read):
        `r` is Memory.record()'s whole list, the columns' fields put back in their places."""
        hash_, type_, status, valid_until, superseded_by = (column[row] for column in self.eager)
        lazy = dict(zip(LAZY_FIELDS, self.record(row), strict=True))
        fields = {"type": type_, "status": status, "valid_until": valid_until, "superseded_by": superseded_by}
        record: dict[str, Any] = {
            "mtime_ns": self.mtime_ns[row],
            "size": self.size[row],
            "inode": self.inode[row],
            "r": [hash_, *(fields[f] if f in fields else lazy[f] for f in RECORD_FIELDS)],
        }
        if self.sealed[row]:
            record["sealed"] = self.sealed[row]
        return record


def columns_of(records: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """(the columns of every record that describes a file, the rest by key: seals of files
    gone or unparsable). A record's `r` is its LAZY_FIELDS' JSON text (bytes, with its
    EAGER fields in `eager`) or Memory.record()'s whole list."""
    columns: dict[str, list[Any]] = {name: [] for name in FIELDS}
    rest: dict[str, Any] = {}
    for key, record in records.items():
        r = record.get("r")
        if r is None:
            rest[key] = dict(record)
            continue
        if isinstance(r, bytes):
            text, eager = r.decode(), record["eager"]
        else:  # Memory.record()'s whole list
            eager = _eager_of_list(r)
            text = orjson.dumps([r[1 + RECORD_FIELDS.index(f)] for f in LAZY_FIELDS]).decode()
        columns["key"].append(key)
        columns["mtime_ns"].append(int(record["mtime_ns"]))
        columns["size"].append(int(record["size"]))
        columns["inode"].append(int(record.get("inode", 0)))
        columns["sealed"].append(str(record.get("sealed") or ""))
        for name, value in zip(EAGER, eager, strict=True):
            columns[name].append(str(value))
        columns["r"].append(text)
    return columns, rest


def _eager_of_list(r: list[Any]) -> tuple[str, ...]:
    """The EAGER fields of a record list (store.files.memory.Memory.record's order)."""
    return (str(r[0]), str(r[1]), str(r[7]), str(r[9]), str(r[14]))
