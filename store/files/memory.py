"""The memory file format: strict YAML front matter + markdown body (SPEC §2; the one-line form
engram writes in store.front_lines, read without YAML, every other block in store.files.front_yaml).

Timestamps and dates stay strings (no implicit YAML timestamps), YAML aliases are refused
(no billion-laughs), a key repeated in one mapping is refused (YAML loaders keep the last value,
so `always: true` could hide after a page of filler), sizes are bounded, and unknown
keys are kept for round-trips.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from types import ModuleType
from typing import Any, Final, Protocol

import orjson

from store.errors import Conflict, CorruptMemory
from store.files import front_lines
from store.files.fsutil import read_regular
from store.files.ids import is_valid_id
from store.files.text_cache import TEXTS
from store.safety import untrusted
from store.safety.invisible import describe, first_invisible

DURABLE_TYPES: Final = ("rule", "decision", "convention", "fact", "procedure", "gotcha", "preference")
NOTE_TYPE: Final = "note"
STATUSES: Final = ("active", "superseded", "retired")
"""`retired`: forgotten by a person (`engram forget`); the file is kept, reads leave it out."""
MAX_FILE_BYTES: Final = 1024 * 1024
MAX_FRONT_MATTER_BYTES: Final = 64 * 1024
MAX_TITLE: Final = 200


RECORD_FIELDS: Final = (
    "type",
    "title",
    "tags",
    "paths",
    "roles",
    "always",
    "status",
    "objective",
    "valid_until",
    "has_variants",
    "refs",
    "updated",
    "review_after",
    "superseded_by",
)
"""What reads need without opening the file (index.json keeps them per file). `refs` holds the
front matter's reference strings as written (store.code.refs parses them), `updated` its `updated`
or else `created` time, for store.code.staleness; `review_after` for store.code.validity;
`superseded_by` for search (a superseded memory's match counts for its successor)."""


class Rows(Protocol):
    """Where a deferred memory's record is kept (store.read.columns.Columns)."""

    def record(self, row: int) -> list[Any]: ...

    def record_bytes(self, row: int) -> bytes: ...


LAZY_FIELDS: Final = tuple(
    f for f in RECORD_FIELDS if f not in ("type", "status", "valid_until", "superseded_by")
)
"""The fields a deferred memory decodes on first use, in the order index.json's record text
holds them (the others, and the hash, every whole-store read asks: they have columns)."""
_LAZY: Final = frozenset(LAZY_FIELDS)
_TUPLES: Final = frozenset({"tags", "paths", "roles", "refs"})
_INTERNED: Final = frozenset({"objective", "updated", "review_after"})


class Memory:
    """One memory: the fields reads need, kept small; front matter and body are read on demand.

    `meta` (the whole front matter, unknown keys included) and `body` come from the file when
    first asked for and are kept in a small shared LRU cache, so a store of 100,000 memories
    does not hold 100,000 bodies in memory. Equality is identity.
    """

    __slots__ = ("id", "scope", "tier", "hash", "path", *RECORD_FIELDS, "_full", "_source", "_row")

    def __init__(
        self,
        id: str,
        scope: str,
        tier: str,
        hash: str,
        *,
        type: str,
        title: str,
        tags: tuple[str, ...] = (),
        paths: tuple[str, ...] = (),
        roles: tuple[str, ...] = (),
        always: bool = False,
        status: str = "active",
        objective: str = "",
        valid_until: str = "",
        has_variants: bool = False,
        refs: tuple[str, ...] = (),
        updated: str = "",
        review_after: str = "",
        superseded_by: str = "",
        path: str | None = None,
        full: tuple[dict[str, Any], str] | None = None,
    ) -> None:
        self.id, self.scope, self.tier, self.hash, self.path = id, scope, tier, hash, path
        self.type, self.title, self.tags, self.paths, self.roles = type, title, tags, paths, roles
        self.always, self.status, self.objective, self.valid_until = always, status, objective, valid_until
        self.has_variants = has_variants
        self.refs, self.updated, self.review_after = refs, updated, review_after
        self.superseded_by = superseded_by
        self._full = full if path is None else None
        self._source: Rows | None = None
        self._row = 0
        if path is not None and full is not None:  # the front matter is in the slots; meta is rare
            TEXTS.hold((path, hash), full[1])

    @classmethod
    def from_parsed(
        cls, file_id: str, scope: str, tier: str, meta: dict[str, Any], body: str, path: str | None = None
    ) -> Memory:
        variants = meta.get("variants")
        return cls(
            file_id,
            scope,
            tier,
            content_hash(meta, body),
            type=str(meta.get("type", "")),
            title=str(meta.get("title", "")),
            tags=tuple(_strings(meta.get("tags"))),
            paths=tuple(_strings(meta.get("paths"))),
            roles=tuple(_strings(meta.get("roles"))),
            always=meta.get("always") is True,
            status=str(meta.get("status", "active")),
            objective=str(meta.get("objective") or ""),
            valid_until=str(meta.get("valid_until") or ""),
            has_variants=isinstance(variants, dict) and bool(variants),
            refs=tuple(_texts(meta.get("refs"))),
            updated=_text(meta.get("updated") or meta.get("created")),
            review_after=_text(meta.get("review_after")),
            superseded_by=_text(meta.get("superseded_by")),
            path=path,
            full=(meta, body),
        )

    def record(self) -> list[Any]:
        """The fields as a JSON-able list (persisted in index.json)."""
        return [
            self.hash,
            *(list(v) if isinstance(v, tuple) else v for v in (getattr(self, f) for f in RECORD_FIELDS)),
        ]

    @classmethod
    def from_record(cls, file_id: str, scope: str, tier: str, path: str, record: list[Any]) -> Memory:
        """The memory index.json describes (run for every memory when a process starts: the
        slots are set directly). TypeError or ValueError when the record does not fit."""
        (
            content_hash,
            kind,
            title,
            tags,
            paths,
            roles,
            always,
            status,
            objective,
            valid_until,
            variants,
            refs,
            updated,
            review_after,
            superseded_by,
        ) = record
        intern = sys.intern  # a handful of distinct values, 100,000 times
        memory = cls.__new__(cls)
        memory.id, memory.scope, memory.tier, memory.hash, memory.path = (
            file_id,
            intern(scope),
            intern(tier),
            content_hash,
            path,
        )
        memory.type, memory.title, memory.status = intern(str(kind)), title, intern(str(status))
        memory.tags = tuple([intern(str(v)) for v in tags])
        memory.paths = tuple([intern(str(v)) for v in paths])
        memory.roles = tuple([intern(str(v)) for v in roles])
        memory.always, memory.has_variants = always, variants
        memory.objective, memory.valid_until = intern(str(objective)), intern(str(valid_until))
        memory.refs = tuple([intern(str(v)) for v in refs])  # files and dates repeat across memories
        memory.updated, memory.review_after = intern(str(updated)), intern(str(review_after))
        memory.superseded_by = intern(str(superseded_by))
        memory._full = None
        memory._source = None
        return memory

    @classmethod
    def deferred(
        cls, file_id: str, scope: str, tier: str, path: str, source: Rows, row: int, eager: Sequence[str]
    ) -> Memory:
        """A memory of a sealed catalog snapshot (store.read.columns) holding only what every read
        of the whole store asks (`eager`: hash, type, status, valid_until, superseded_by); the
        rest of its record is decoded from the snapshot when first asked for (`__getattr__`), so a
        process that searches 100,000 memories builds the fields of the hits alone."""
        memory = cls.__new__(cls)
        memory.id, memory.scope, memory.tier, memory.path = file_id, scope, tier, path
        memory.hash, memory.type, memory.status, memory.valid_until, memory.superseded_by = eager
        memory._full = None
        memory._source, memory._row = source, row
        return memory

    def __getattr__(self, name: str) -> Any:
        """A lazy field of a deferred memory: its record decoded once, every slot set."""
        if name not in _LAZY:
            raise AttributeError(name)
        source = self._source
        if source is not None:
            self._fill(source)
        # filled here or by another thread meanwhile (which clears the source last)
        return object.__getattribute__(self, name)

    def _fill(self, source: Rows) -> None:
        intern = sys.intern
        try:
            values = source.record(self._row)
            if len(values) != len(LAZY_FIELDS):
                raise ValueError("a record of another layout")
            for name, value in zip(LAZY_FIELDS, values, strict=True):
                if name in _TUPLES:
                    value = tuple([intern(str(v)) for v in value])  # files and dates repeat across memories
                elif name in _INTERNED:
                    value = intern(str(value))
                setattr(self, name, value)
        except (TypeError, ValueError):  # the snapshot was checked: not expected
            fallback = Memory(self.id, self.scope, self.tier, self.hash, type=self.type, title=self.id)
            for name in LAZY_FIELDS:
                setattr(self, name, getattr(fallback, name))
        self._source = None

    def lazy_record(self) -> list[Any]:
        """The `LAZY_FIELDS` as a JSON-able list (index.json's record text)."""
        return [list(v) if isinstance(v, tuple) else v for v in (getattr(self, f) for f in LAZY_FIELDS)]

    def record_json(self) -> bytes:
        """`lazy_record()` as JSON bytes; a deferred memory's are its snapshot's, never decoded."""
        source = self._source  # once: another thread's `_fill` may clear it meanwhile
        if source is not None:
            return source.record_bytes(self._row)
        return orjson.dumps(self.lazy_record())

    def _current(self) -> tuple[dict[str, Any], str] | None:
        """The file's front matter and body while it still holds what was indexed (its content
        hash), remembered for the next read; None once it holds anything else (the next refresh
        tells). Never another version's text: a file edited, then put back, must not leave one
        version's fields under the other's key. Read as every memory file is: a regular file,
        never through a link, never a FIFO (store.files.fsutil.read_regular)."""
        assert self.path is not None
        try:
            text = read_regular(self.path, MAX_FILE_BYTES).decode("utf-8")
            meta, body = split_front_matter(text)
            if content_hash(meta, body) != self.hash:
                return None
        except (
            OSError,
            UnicodeDecodeError,
            CorruptMemory,
            TypeError,
            ValueError,
            OverflowError,
            RecursionError,
        ):
            return None
        TEXTS.remember((self.path, self.hash, "meta"), meta)
        TEXTS.remember((self.path, self.hash, "body"), body)
        return meta, body

    @property
    def meta(self) -> dict[str, Any]:
        if self._full is not None:
            return self._full[0]
        assert self.path is not None
        found = TEXTS.recall((self.path, self.hash, "meta"))
        if found is None:
            current = self._current()
            if current is None:  # changed or gone since it was indexed; the next refresh tells
                return {"id": self.id, "type": self.type, "title": self.title}
            found = current[0]
        assert isinstance(found, dict)
        return found

    @property
    def body(self) -> str:
        if self._full is not None:
            return self._full[1]
        assert self.path is not None
        found = TEXTS.take((self.path, self.hash))
        if found is None:
            found = TEXTS.recall((self.path, self.hash, "body"))
        if found is None:
            current = self._current()
            found = current[1] if current is not None else ""  # changed or gone: see `meta`
        assert isinstance(found, str)
        return found

    @property
    def active(self) -> bool:
        return self.status == "active"

    @property
    def variants(self) -> dict[str, str]:
        if not self.has_variants:
            return {}
        raw = self.meta.get("variants")
        return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}

    @property
    def card(self) -> str:
        return f"- [{self.type}] {self.title} ({self.id})"

    def __repr__(self) -> str:
        return f"Memory({self.scope}/{self.tier}/{self.id})"


def _texts(value: Any) -> list[str]:
    """The strings of a list (or the one string); anything else is left out."""
    values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [v for v in values if isinstance(v, str)]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _strings(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    if isinstance(value, str) and value:
        return [value]
    return []


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Return (front matter, body); raise CorruptMemory unless it is a closed YAML mapping."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise CorruptMemory("a memory file must start with a '---' front-matter line")
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise CorruptMemory("the front matter is not closed by a '---' line")
    block = text[4 : end + 1]
    # (a character is at most 4 bytes: a short block needs no encoding to be measured)
    if len(block) > MAX_FRONT_MATTER_BYTES // 4 and len(block.encode()) > MAX_FRONT_MATTER_BYTES:
        raise CorruptMemory(f"the front matter exceeds {MAX_FRONT_MATTER_BYTES // 1024} KiB")
    meta = front_lines.simple(block) if block and not block.isspace() else {}
    if meta is None:
        meta = _front_yaml().parse_block(block)
    if not isinstance(meta, dict):
        raise CorruptMemory("the front matter must be a YAML mapping of keys to values")
    body = text[end + 5 :] if end + 5 <= len(text) else ""
    return meta, body


def _front_yaml() -> ModuleType:
    """The strict YAML side of the format, for a block outside the one-line form and for writes."""
    from store.files import front_yaml  # seam: yaml, for blocks outside the one-line form, and writes

    return front_yaml


def body_of(text: str) -> str:
    """The body of a memory file's text without parsing its front matter ("" if malformed)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return ""
    end = text.find("\n---\n", 3)
    return "" if end == -1 else text[end + 5 :]


def content_hash(meta: dict[str, Any], body: str) -> str:
    """sha256 of the canonical form: front matter with sorted keys, body with \\n line ends."""
    canonical = orjson.dumps(meta, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return hashlib.sha256(canonical + b"\n" + body.replace("\r\n", "\n").encode()).hexdigest()


def provenance(source: str) -> str:
    """The line an imported memory's body ends with, saying where it came from. One form, so
    what compares memories by meaning can leave it out (`without_provenance`)."""
    return f"\n\n(imported from {source})"


_PROVENANCE: Final = re.compile(r"\n*\(imported from [^\n]*\)\s*\Z")


def without_provenance(body: str) -> str:
    """`body` without its closing `provenance` line: two rules imported from one file share it
    word for word, which says nothing of what either means."""
    return _PROVENANCE.sub("", body)


def embedded_prefix(title: str, tags: Sequence[str]) -> str:
    """What every window of a memory starts with when it is embedded (store.search.vectors.windows)."""
    return "\n".join(part for part in (title, " ".join(tags)) if part)


def as_embedded(title: str, tags: Sequence[str], body: str) -> str:
    """A memory-to-be's text as it would be embedded: the very window when its body fits one,
    so the vectors made for its verdicts are the ones its commit reuses (the model keeps its
    last query texts' vectors), and the whole text in that form when it is longer."""
    prefix = embedded_prefix(title, tags)
    run = " ".join(without_provenance(body).split())
    return f"{prefix}\n{run}" if run else prefix


_CONFLICT_START: Final = re.compile(r"^<{7}(?: |$)", re.MULTILINE)
_CONFLICT_END: Final = re.compile(r"^>{7}(?: |$)", re.MULTILINE)
CONFLICT_FIX: Final = (
    "holds git conflict markers (<<<<<<< … >>>>>>>), so it is not loaded: keep the right lines, "
    "remove the markers, then `git add` the file (and `engram verify`)"
)


def parse_memory(data: bytes, *, file_id: str, scope: str, tier: str, path: str | None = None) -> Memory:
    """Parse one file's bytes; the file name gives the id. Raises CorruptMemory."""
    if len(data) > MAX_FILE_BYTES:
        raise CorruptMemory(f"the file exceeds {MAX_FILE_BYTES // (1024 * 1024)} MiB and is not loaded")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptMemory("the file is not valid UTF-8") from None
    # never half-read (the plain `in` first: a regex search over every file is slower)
    if "<<<<<<<" in text and _CONFLICT_START.search(text) and _CONFLICT_END.search(text):
        raise Conflict(CONFLICT_FIX)
    meta, body = split_front_matter(text)
    _check_meta(meta, file_id, tier)
    try:
        return Memory.from_parsed(file_id, scope, tier, meta, body, path)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise CorruptMemory(
            "front-matter values must be text, numbers (64-bit), booleans, lists or mappings"
        ) from None


_DATE_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")


def _is_date(value: object) -> bool:
    return isinstance(value, str) and _DATE_RE.fullmatch(value) is not None


def _check_meta(meta: dict[str, Any], file_id: str, tier: str) -> None:
    declared = meta.get("id", file_id)
    if declared != file_id:
        named = untrusted.plain_name(declared)  # a diagnostic reaches the agent unfenced
        raise CorruptMemory(
            f"the front-matter id{f' {named}' if named else ''} differs from the file name {file_id!r}"
        )
    kind = meta.get("type")
    allowed = (NOTE_TYPE,) if tier == "working" else DURABLE_TYPES
    if kind not in allowed:
        named = "None" if kind is None else untrusted.plain_name(kind)
        raise CorruptMemory(f"{f'type {named}' if named else 'the type'} is not one of: {', '.join(allowed)}")
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE:
        raise CorruptMemory(f"title must be a non-empty string of at most {MAX_TITLE} characters")
    if untrusted.control_character(title) is not None:
        raise CorruptMemory("title must be a single line with no control characters")
    hidden = first_invisible(title)
    if hidden is not None:
        raise CorruptMemory(f"title holds {describe(hidden)}, which a reader cannot see; remove it")
    if meta.get("status", "active") not in STATUSES:
        raise CorruptMemory(f"status must be one of: {', '.join(STATUSES)}")
    for key in ("tags", "paths", "roles", "supersedes", "refs"):
        value = meta.get(key)
        if value is None:
            continue
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise CorruptMemory(f"{key} must be a list of strings")
        if key == "refs" or not value:  # a bad ref is kept and named by the staleness check
            continue
        # Every other list is of names. One look at them all, space-joined, first: a character
        # refused in one name is refused there too (a joiner at a name's edge meets the space).
        joined = " ".join(value)
        bad: int | None = (
            None  # which name (1-based): a diagnostic never quotes it (it reaches the agent unfenced)
        )
        if untrusted.control_character(joined):
            bad = next((n for n, v in enumerate(value, 1) if untrusted.control_character(v)), None)
        if bad is not None:
            raise CorruptMemory(f"{key}: name {bad} holds a control character or line break")
        unseen = (
            next((n for n, v in enumerate(value, 1) if first_invisible(v)), None)
            if first_invisible(joined)
            else None
        )
        if unseen is not None:
            raise CorruptMemory(f"{key}: name {unseen} holds a character a reader cannot see")
    if "always" in meta and not isinstance(meta["always"], bool):
        raise CorruptMemory("always must be true or false")
    for key in ("valid_until", "review_after") if tier == "durable" else ():  # store.code.validity
        if meta.get(key) is not None and not _is_date(meta[key]):
            raise CorruptMemory(f"{key} must be a date written YYYY-MM-DD")
    superseded_by = meta.get("superseded_by")
    if superseded_by is not None and not is_valid_id(superseded_by):
        raise CorruptMemory("superseded_by must be a memory id")


def iso(moment: float) -> str:
    """A front-matter timestamp (`created`, `updated`): UTC, to the second."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def render_memory(meta: dict[str, Any], body: str) -> bytes:
    """The file bytes for a memory: front matter in the given key order, then the body."""
    front: str = _front_yaml().dump_block(meta)
    text = f"---\n{front}---\n{body if body.endswith(chr(10)) or not body else body + chr(10)}"
    return text.encode("utf-8")


def render_checked(meta: dict[str, Any], body: str, *, scope: str, tier: str) -> bytes:
    """`render_memory`, then parsed back exactly as a read would: a file engram would refuse to
    load (a NUL or line break in the title, a title over the limit, a bad id…) is never
    written. Raises CorruptMemory naming the problem."""
    if not is_valid_id(meta.get("id")):
        raise CorruptMemory(f"{str(meta.get('id'))[:80]!r} is not a memory id")
    data = render_memory(meta, body)
    parse_memory(data, file_id=str(meta.get("id", "")), scope=scope, tier=tier)
    return data
