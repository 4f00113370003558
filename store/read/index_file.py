"""`index.json` and `seals.log`: what one scope's catalog persists between processes.

`index.json` keeps, per memory file, its mtime and size, the fields reads need and the hash
(so a new process parses only files that changed), and a `sealed` hash: the hash engram itself
last wrote or a human accepted with `engram verify --accept`; `verify` compares the two to
report hand edits. It is derived data: missing or corrupt, it is rebuilt from the files.
engram's own writes append their seals to `seals.log` until the next `index.json` folds them in.

A repository is untrusted input (SPEC §2): `index.json` carries a tag and every `seals.log`
line its own, both keyed by the per-user secret (store.files.user_key). An index without a valid tag is
discarded — its records and seals vouch for nothing — and rebuilt, with a notice; a seal line
without one is ignored. So a pull request that adds a memory plus a seal for it is still
reported by verify as added by hand. Neither file is ever opened through a link, nor blocks on
a FIFO, nor is written into an inode shared with another file.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import orjson

from store.errors import NotRegular, Problem, UnsafePath, Untrusted
from store.files import sealed as codec  # `sealed` here is a seal's time
from store.files.fsutil import open_regular, read_regular, write_atomic
from store.files.workspace import ScopeDir
from store.plurals import count
from store.read.columns import Columns, columns_of
from store.read.snapshot import memory_key

INDEX_VERSION: Final = 8
INDEX_KIND: Final = "index"
SEAL_KIND: Final = "seal"
SHELL_MARK: Final = "agent-shell:"
"""Prefix of a seal recorded for a CLI write made from an agent's shell (SPEC §7): the hash
follows it (nothing, for a file removed there). Never equal to a file's hash, so verify lists
the file for review until the human's `engram verify --accept` records the plain hash."""
MAX_INDEX_BYTES: Final = 1 << 30


def _record(text: str) -> dict[str, Any]:
    """One record's JSON text decoded; a record that does not decode describes nothing ({})."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


class Records:
    """The stored records by key, each decoded when first asked for: a row of index.json's
    columns (an int), or an earlier layout's JSON text, so a 100,000-memory index costs its
    columns while a new process starts, not a Python object for every field of every record."""

    def __init__(self, raw: dict[str, Any] | None = None, rows: Columns | None = None) -> None:
        self._given: dict[str, Any] = raw if raw is not None else {}
        self._table: dict[str, Any] | None = None if rows is not None else self._given
        self.rows = rows
        """The columns the int values are rows of (None for an earlier layout)."""

    @property
    def _raw(self) -> dict[str, Any]:
        """By key: each row's number, then what `raw` gave (made when first asked: a catalog
        that takes every row in at once never asks)."""
        if self._table is None:
            assert self.rows is not None
            self._table = dict(zip(self.rows.key, range(len(self.rows)), strict=True))
            self._table.update(self._given)
        return self._table

    def _decoded(self, value: Any) -> Any:
        if isinstance(value, str):
            return _record(value)
        if isinstance(value, int) and self.rows is not None:
            try:
                return self.rows.stored(value)
            except (ValueError, IndexError, orjson.JSONDecodeError):
                return {}
        return value

    def get(self, key: str, default: Any = None) -> Any:
        value = self._raw.get(key)
        if value is None:
            return default
        if not isinstance(value, dict):
            value = self._raw[key] = self._decoded(value)  # decoded once
        return value

    def row(self, key: str) -> int | None:
        """The row of `key` in the columns, while its record is still undecoded."""
        value = self._raw.get(key)
        return value if isinstance(value, int) and self.rows is not None else None

    def pop(self, key: str, default: Any = None) -> Any:
        value = self._raw.pop(key, None)
        if value is None:
            return default
        return self._decoded(value)

    def discard(self, key: str) -> None:
        self._raw.pop(key, None)

    def __setitem__(self, key: str, value: dict[str, Any]) -> None:
        self._raw[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __len__(self) -> int:
        return len(self._raw)

    def keys(self) -> list[str]:
        return list(self._raw)

    def items(self) -> list[tuple[str, Any]]:
        return [(key, self.get(key)) for key in list(self._raw)]

    def clear(self) -> None:
        self._raw.clear()


class IndexFile:
    """One scope's `index.json` and `seals.log`."""

    def __init__(
        self, scope: ScopeDir, *, key: Callable[[], bytes], notice: Callable[[str, str], None]
    ) -> None:
        self.scope = scope
        self._key = key
        self._notice = notice
        self._seals_path = scope.seals_path
        self.stamps: dict[str, Any] | None = None
        """The folder stamps of the index last read, when it was written for this folder."""

    def read(self) -> tuple[Records, Problem | None]:
        """The stored index records by key (seals.log folded in), and a problem when it was
        unusable or untrusted (no valid tag of this user's engram): then it is discarded — its
        records and seals count for nothing — and the catalog's next flush rebuilds it from the files."""
        path = self.scope.index_path
        memories = Records()
        self.stamps = None
        problem: Problem | None = None
        shown = self.scope.display(path)
        try:
            raw = read_regular(path, MAX_INDEX_BYTES)
            try:
                data = codec.load_object(self._key(), INDEX_KIND, raw)  # parsed in place: no copy
            except Untrusted:
                problem = Problem("ENGRAM_UNTRUSTED", shown, _UNTRUSTED)
            else:
                found = data.get("memories") if isinstance(data, dict) else None
                if isinstance(found, dict) and data.get("version") == INDEX_VERSION:
                    memories = self._rows(data, found)
                elif isinstance(found, dict) and isinstance(data.get("version"), int):
                    # another engram version's records: the files are parsed again, the seals kept
                    old = Records(found)
                    memories = Records({k: {"sealed": v["sealed"]} for k, v in old.items() if "sealed" in v})
                else:
                    problem = Problem("ENGRAM_CORRUPT", shown, "unknown format; rebuilt from the files")
        except FileNotFoundError:
            pass
        except NotRegular as exc:
            if exc.errno == errno.EFBIG:
                problem = Problem("ENGRAM_CORRUPT", shown, "unreadable; rebuilt from the files")
            else:
                problem = Problem("ENGRAM_UNSAFE_PATH", shown, _damaged_index(shown))
        except (OSError, ValueError):  # orjson.JSONDecodeError, or columns that do not add up
            problem = Problem("ENGRAM_CORRUPT", shown, "unreadable; rebuilt from the files")
        if problem is not None:
            self._notice(problem.code, f"{problem.file}: {problem.message}")
        for key, sealed in self._read_seals():  # seals appended since index.json was written
            record = memories.get(key)
            if sealed is None:  # engram itself removed the file: nothing to report as missing
                memories.pop(key, None)
                continue
            memories[key] = {**record, "sealed": sealed} if isinstance(record, dict) else {"sealed": sealed}
        return memories, problem

    def _rows(self, data: dict[str, Any], found: dict[str, Any]) -> Records:
        """This layout's records: the columns' rows by key, and the seals of files gone or
        unparsable (`memories`); the folder stamps the catalog may trust (`stamps`)."""
        rows = Columns.parse(data.get("rows"))
        self.stamps = data.get("stamps") if data.get("folder") == str(self.scope.root) else None
        return Records({key: value for key, value in found.items() if isinstance(value, dict)}, rows)

    def write(self, records: Mapping[str, Any], stamps: Mapping[str, Any] | None = None) -> None:
        """Replace `index.json` with `records` (seals included): `seals.log` is folded in.
        `stamps`: per tier, the folder's mtime and when the catalog last knew every file in it
        (store.read.catalog.Catalog trusts them to skip a listing)."""
        columns, rest = columns_of(records)
        body = orjson.dumps(
            {
                "version": INDEX_VERSION,
                "folder": str(self.scope.root),
                "stamps": dict(stamps or {}),
                "rows": columns,
                "memories": rest,
            }
        )
        write_atomic(self.scope.index_path, codec.seal(self._key(), INDEX_KIND, body))
        self._seals_path.unlink(missing_ok=True)  # now folded into index.json

    def append_seals(self, keys: Iterable[str], hashes: Mapping[str, str]) -> None:
        """Append a tagged seal line per key: its current hash, or None when engram removed it."""
        secret_key = self._key()
        lines = b"".join(
            orjson.dumps(
                [key, hashes.get(key), _seal_tag(secret_key, self.scope.scope, key, hashes.get(key))]
            )
            + b"\n"
            for key in sorted(keys)
        )
        self._append_seals(lines, secret_key)

    def _read_seals(self) -> list[tuple[str, str | None]]:
        """Seals engram appended since the last index; a line without a valid tag of this user's
        engram (planted, or from elsewhere) is ignored, with a notice."""
        try:
            lines = read_regular(self._seals_path, MAX_INDEX_BYTES).splitlines()
        except FileNotFoundError:
            return []
        except OSError:
            self._notice("ENGRAM_UNTRUSTED", f"{self.scope.display(self._seals_path)}: {_UNUSABLE_SEALS}")
            return []
        seals = []
        refused = 0
        key = self._key() if lines else b""
        for line in lines:
            try:
                parsed = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a torn last line from a crash: that seal is simply not recorded
            if not isinstance(parsed, list) or len(parsed) != 3:
                refused += 1
                continue
            name, sealed, found = parsed
            if not isinstance(name, str) or not (sealed is None or isinstance(sealed, str)):
                refused += 1
                continue
            if not codec.valid(key, SEAL_KIND, _seal_bytes(self.scope.scope, name, sealed), found):
                refused += 1
                continue
            seals.append((name, sealed))
        if refused:
            self._notice(
                "ENGRAM_UNTRUSTED",
                f"{self.scope.display(self._seals_path)}: {count(refused, 'line')} not written by this user's "
                "engram were ignored (they vouch for nothing in verify)",
            )
        return seals

    def _append_seals(self, lines: bytes, secret_key: bytes) -> None:
        """Append to `seals.log`: never through a link, never blocking (a FIFO), never into an
        inode shared with a file elsewhere. A hard link (st_nlink > 1, e.g. to `~/.profile`) is
        untrusted: the file is replaced by rename with a fresh one holding this user's valid seal
        lines plus the new ones, so the other file is never written; a notice says so."""
        shown = self.scope.display(self._seals_path)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        try:
            fd = open_regular(self._seals_path, flags=flags)
        except NotRegular:
            raise UnsafePath(
                f"{shown} is not a regular file (a link, folder or FIFO); remove {shown} (engram rebuilds it)"
            ) from None
        except OSError as exc:
            raise UnsafePath(
                f"{shown} cannot be appended to ({exc.strerror}); remove {shown} (engram rebuilds it)"
            ) from None
        try:
            if os.fstat(fd).st_nlink > 1:
                os.close(fd)
                fd = -1
                kept = self._valid_seal_lines(secret_key)
                write_atomic(self._seals_path, kept + lines)
                self._notice(
                    "ENGRAM_UNTRUSTED",
                    f"{shown} was a hard link shared with another file; engram replaced it with a fresh "
                    "file and never wrote into the other one",
                )
                return
            os.write(fd, lines)
            os.fsync(fd)
        finally:
            if fd >= 0:
                os.close(fd)

    def _valid_seal_lines(self, secret_key: bytes) -> bytes:
        """The lines of `seals.log` that carry a valid tag of this user's engram (nothing else
        of a file it may share with another is copied)."""
        try:
            raw = read_regular(self._seals_path, MAX_INDEX_BYTES)
        except OSError:
            return b""
        kept = []
        for line in raw.splitlines():
            try:
                name, sealed, found = orjson.loads(line)
            except (orjson.JSONDecodeError, TypeError, ValueError):
                continue
            typed = isinstance(name, str) and (sealed is None or isinstance(sealed, str))
            if typed and codec.valid(
                secret_key, SEAL_KIND, _seal_bytes(self.scope.scope, name, sealed), found
            ):
                kept.append(line + b"\n")
        return b"".join(kept)


_UNTRUSTED: Final = (
    "carries no valid tag of this user's engram (it may have come with a clone, or from an older "
    "engram); discarded and rebuilt from the files. Review with `engram verify`, then "
    "`engram verify --accept` records the files as reviewed"
)


def _damaged_index(shown: str) -> str:
    """A damaged index (not a regular file) is reported as the problem: engram cannot tell which
    memories it wrote, and it never blames the user for them (verify lists none as added by hand)."""
    return (
        "is not a regular file (a folder, FIFO or device): engram cannot tell which memory files it "
        f"wrote itself. Remove {shown} (engram rebuilds it), review the memory files, then "
        "`engram verify --accept`"
    )


_UNUSABLE_SEALS: Final = "is not a regular file; ignored (it vouches for nothing in verify)"


def _seal_bytes(scope: str, key: str, sealed: str | None) -> bytes:
    return orjson.dumps([scope, key, sealed])


def _seal_tag(secret_key: bytes, scope: str, key: str, sealed: str | None) -> str:
    return codec.tag(secret_key, SEAL_KIND, _seal_bytes(scope, key, sealed))


def index_records(
    entries: list[Any], stored: Records, broken: set[str], *, accept_all: bool, agent_shell: bool
) -> dict[str, Any]:
    """index.json's records for these parsed files (store.read.catalog.Catalog.flush): each keeps
    its stored seal, or with `accept_all` is sealed as it is now (`SHELL_MARK` first when accepted
    from an agent's shell); a file that does not parse keeps its last record, to compare the
    repaired file with; a file gone keeps its seal as a tombstone until it is accepted."""
    records: dict[str, Any] = {}
    for entry in entries:
        memory = entry.memory
        assert memory is not None and memory.path is not None
        key = memory_key(memory)
        found = stored.get(key)
        previous: dict[str, Any] = found if isinstance(found, dict) else {}
        record: dict[str, Any] = {
            "mtime_ns": entry.mtime_ns,
            "size": entry.size,
            "inode": entry.inode,
            "r": memory.record_json(),
            "eager": (memory.hash, memory.type, memory.status, memory.valid_until, memory.superseded_by),
        }
        if accept_all and agent_shell and previous.get("sealed") != memory.hash:
            record["sealed"] = SHELL_MARK + memory.hash
        elif accept_all:
            record["sealed"] = memory.hash
        elif previous.get("sealed"):
            record["sealed"] = previous["sealed"]
        records[key] = record
    for key in sorted(broken - records.keys()):  # a file that does not parse is not gone:
        found = stored.get(key)  # its last record stays, to compare the repaired file with
        if isinstance(found, dict) and found.get("sealed"):
            records[key] = {"sealed": found["sealed"]}
    if not accept_all or agent_shell:
        for key, previous in stored.items():  # keep tombstones until accepted
            if key not in records and isinstance(previous, dict) and previous.get("sealed"):
                gone = SHELL_MARK if accept_all else previous["sealed"]
                records[key] = {"sealed": gone, "gone": True}
    return records
