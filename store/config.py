"""Settings: workspace `.engram/config.json` over `$ENGRAM_HOME/config.json` over defaults (SPEC §9).

Each file is validated with a JSON Schema; an invalid file is ignored as a whole and reported
as a diagnostic naming the key and the allowed range, so engram still runs on the rest. The
digests of files that passed are kept in `$ENGRAM_HOME/config-checked.json` (`CheckedConfigs`),
so a process that reads an unchanged file again (every session hook, every server start) does
not import jsonschema for it, ~70 ms.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import threading
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, Final

import orjson

from store.errors import MESSAGE_LIMIT, NotRegular
from store.files.fsutil import read_regular, write_atomic
from store.files.ids import ID_PATTERN
from store.safety import untrusted

_SLUG: Final = ID_PATTERN  # matched in full: no trailing newline


def _int(low: int, high: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


def _unit() -> dict[str, Any]:
    return {"type": "number", "minimum": 0, "maximum": 1}


_WORDS: Final = {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": 200}

SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "load": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "budget_tokens": _int(100, 32000),
                "full_cap_tokens": _int(1000, 200000),
                "working_ttl_days": _int(1, 365),
            },
        },
        "mcp": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"resource_limit": _int(0, 200)},
        },
        "dedup": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"duplicate": _unit(), "related": _unit()},
        },
        "routes": {
            "type": "object",
            "propertyNames": {"pattern": _SLUG},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"keywords": _WORDS, "tags": _WORDS, "types": _WORDS},
            },
        },
        "search": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "vectors": {"type": "boolean"},
                "vector_model": {"type": "string", "minLength": 1, "maxLength": 4096},
                "bm25_weight": _unit(),
            },
        },
        "role": {"type": "string", "pattern": _SLUG},
        "rule_variant": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "mode": {"enum": ["base", "fixed", "rotate"]},
                "variant": {"type": "string", "maxLength": 64},
                "ids": {"type": "object"},
            },
        },
    },
}


@dataclass(frozen=True, slots=True)
class Config:
    budget_tokens: int = 2000
    full_cap_tokens: int = 20000
    working_ttl_days: int = 7
    resource_limit: int = 20
    dedup_duplicate: float = 0.9
    dedup_related: float = 0.6
    routes: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    role: str = "default"
    rule_variant: dict[str, Any] = field(default_factory=lambda: {"mode": "base"})
    vectors: bool = True
    """`search.vectors`: use the optional vector signal when the `vectors` extra is installed."""
    vector_model: str = ""
    """`search.vector_model`: a local static-model folder instead of the bundled one (user config only)."""
    bm25_weight: float | None = None
    """`search.bm25_weight`: BM25's share of the fused score (the vector signal has the rest);
    unset, the model's own default (store.search.fusion.model_weight)."""
    diagnostics: tuple[tuple[str, str], ...] = ()


MAX_CONFIG_BYTES: Final = 1 << 20
"""A settings file larger than this (1 MiB) is ignored with a diagnostic: none needs more."""


class ConfigProblem(str):
    """A problem text with its own code (`ENGRAM_CONFIG` for plain strings)."""

    code: str = "ENGRAM_CONFIG"

    def __new__(cls, text: str, code: str = "ENGRAM_CONFIG") -> ConfigProblem:
        made = super().__new__(cls, text)
        made.code = code
        return made


def _link_leaves(path: Path, base: Path) -> bool:
    """Whether `path` is a symbolic link whose target lies outside `base` (a clone's link)."""
    if not path.is_symlink():
        return False
    try:
        real, real_base = path.resolve(), base.resolve()
    except (OSError, RuntimeError):  # a link loop: it leads nowhere inside `base` either
        return True
    return real_base not in real.parents


CHECKED_NAME: Final = "config-checked.json"
CHECKED_KEEP: Final = 64
"""Digests `config-checked.json` keeps, newest last (a user's configs across workspaces)."""


class CheckedConfigs:
    """Which config files passed the schema: sha256 digests of the schema and a file's bytes,
    kept in the user's own folder (never in a workspace, so a clone cannot add to it). A file
    whose digest is known is taken as valid without jsonschema; any change to the file or to
    the schema makes a new digest, checked again. `writable` False (a read-only store) only
    reads the list."""

    def __init__(self, path: Path, *, writable: bool) -> None:
        self.path = path
        self._writable = writable
        self._known: list[str] | None = None
        self._lock = threading.Lock()

    @staticmethod
    def digest(raw: bytes) -> str:
        return hashlib.sha256(_schema_text() + b"\0" + raw).hexdigest()

    def known(self, digest: str) -> bool:
        with self._lock:
            return digest in self._read()

    def note(self, digest: str) -> None:
        with self._lock:
            known = self._read()
            if digest in known or not self._writable or not self.path.parent.is_dir():
                return
            known.append(digest)
            del known[:-CHECKED_KEEP]
            with contextlib.suppress(OSError):  # a memo: the next read checks again
                write_atomic(self.path, orjson.dumps(known), sync_dir=False)

    def _read(self) -> list[str]:
        if self._known is None:
            try:
                found = orjson.loads(read_regular(self.path, 1 << 16))
            except (OSError, orjson.JSONDecodeError):
                found = []
            self._known = [d for d in found if isinstance(d, str)] if isinstance(found, list) else []
        return self._known


@cache
def _schema_text() -> bytes:
    return orjson.dumps(SCHEMA, option=orjson.OPT_SORT_KEYS)


def read_config_file(
    path: Path, label: str, *, base: Path | None = None, checked: CheckedConfigs | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The file's settings, or ({}, problems) when it is unreadable or invalid.

    Read as a regular file of at most 1 MiB, never blocking (a FIFO or a device such as
    `/dev/zero` or `/dev/stdin` is never read: the store runs on defaults with a diagnostic).
    With `base` (the workspace, for `.engram/config.json`, which travels through git) a link
    leading outside `base` is refused with ENGRAM_UNSAFE_PATH; a link inside it is followed.
    Without `base` (`$ENGRAM_HOME/config.json`, often a dotfiles link) links are followed, and
    the target must still be a regular file. `checked`: skip the schema for bytes that passed
    it before, and remember these when they pass."""
    if base is not None and _link_leaves(path, base):
        return {}, [
            ConfigProblem(
                f"{label} is a symbolic link leading outside the workspace; engram does not read "
                "through it and runs on defaults. Replace the link with a real file",
                "ENGRAM_UNSAFE_PATH",
            )
        ]
    try:
        raw = read_regular(path, MAX_CONFIG_BYTES, follow=True)
    except FileNotFoundError:
        return {}, []
    except NotRegular as exc:
        if exc.errno == errno.EFBIG:
            why = f"is larger than {MAX_CONFIG_BYTES} bytes"
        else:
            why = "is not a regular file (a folder, FIFO or device)"
        return {}, [f"{label} {why}; it is ignored and engram runs on defaults. Replace it with a JSON file"]
    except OSError as exc:
        return {}, [f"{label}: cannot be read ({exc.strerror})"]
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return {}, [f"{label}: not valid JSON ({exc}); fix the file or delete it to use defaults"]
    digest = CheckedConfigs.digest(raw) if checked is not None else ""
    if checked is not None and isinstance(data, dict) and checked.known(digest):
        return data, []
    from store import config_check  # seam: jsonschema, only for a config file not checked before

    problems = config_check.problems(SCHEMA, data, label)
    if problems:
        return {}, [problem + "; the file is ignored until fixed" for problem in problems]
    assert isinstance(data, dict)
    if checked is not None:
        checked.note(digest)
    return data, []


def merge_config(layers: list[dict[str, Any]], problems: list[str]) -> Config:
    """Later layers win key by key; `routes` merge per class."""
    values: dict[str, Any] = {}
    routes: dict[str, dict[str, list[str]]] = {}
    for layer in layers:
        for section, keys in (("load", ("budget_tokens", "full_cap_tokens", "working_ttl_days")),):
            for key in keys:
                with contextlib.suppress(KeyError, TypeError):
                    values[key] = layer[section][key]
        with contextlib.suppress(KeyError, TypeError):
            values["resource_limit"] = layer["mcp"]["resource_limit"]
        with contextlib.suppress(KeyError, TypeError):
            values["dedup_duplicate"] = layer["dedup"]["duplicate"]
        with contextlib.suppress(KeyError, TypeError):
            values["dedup_related"] = layer["dedup"]["related"]
        for key in ("vectors", "bm25_weight"):
            with contextlib.suppress(KeyError, TypeError):
                values[key] = layer["search"][key]
        for name, spec in (layer.get("routes") or {}).items():
            routes[name] = {k: list(v) for k, v in spec.items()}
        if "role" in layer:
            values["role"] = layer["role"]
        if "rule_variant" in layer:
            values["rule_variant"] = dict(layer["rule_variant"])
    return Config(
        **values,
        routes=routes,
        # every problem quotes a clone's keys or values: escaped here, where they become
        # diagnostics, as store.errors.Problem escapes its own
        diagnostics=tuple(
            (getattr(p, "code", "ENGRAM_CONFIG"), untrusted.line(p, MESSAGE_LIMIT)) for p in problems
        ),
    )


def load_config(user_path: Path | None, project_path: Path, checked: CheckedConfigs | None = None) -> Config:
    """Both layers merged (`user_path` None: no user layer, as for an unusable $ENGRAM_HOME)."""
    layers: list[dict[str, Any]] = []
    problems: list[str] = []
    workspace = project_path.parent.parent  # `<workspace>/.engram/config.json`
    for path, label, base in (
        (user_path, "$ENGRAM_HOME/config.json", None),
        (project_path, ".engram/config.json", workspace),
    ):
        if path is None:
            layers.append({})
            continue
        data, found = read_config_file(path, label, base=base, checked=checked)
        layers.append(data)
        problems.extend(found)
    model, found = _vector_model(layers[0], layers[1])
    config = merge_config(layers, problems + found)
    return replace(config, vector_model=model) if model else config


@dataclass(frozen=True, slots=True)
class FileCheck:
    """One settings file as `load_config` takes it (for `engram doctor`, engram_mcp.hosts.doctor.health)."""

    path: Path
    label: str
    """`$ENGRAM_HOME/config.json` or `.engram/config.json`."""
    ignored: tuple[str, ...]
    """Why the whole file is ignored (every setting in it falls back); () when it is used."""
    partly: tuple[str, ...]
    """Settings of a file in use that are ignored, each with why."""


def check_files(
    user_path: Path, project_path: Path, checked: CheckedConfigs | None = None
) -> list[FileCheck]:
    """Both settings files, checked exactly as `load_config` reads them; writes nothing (pass a
    `CheckedConfigs` that is not writable, or None to check every file with the schema)."""
    workspace = project_path.parent.parent
    user, user_problems = read_config_file(user_path, "$ENGRAM_HOME/config.json", checked=checked)
    project, project_problems = read_config_file(
        project_path, ".engram/config.json", base=workspace, checked=checked
    )
    _, partly = _vector_model(user, project)
    return [
        FileCheck(user_path, "$ENGRAM_HOME/config.json", tuple(user_problems), ()),
        FileCheck(project_path, ".engram/config.json", tuple(project_problems), tuple(partly)),
    ]


def _vector_model(user: dict[str, Any], project: dict[str, Any]) -> tuple[str, list[str]]:
    """`search.vector_model`, honoured from the user's config only: a workspace's config travels
    through git, and a clone may not name a path outside its scope (SPEC §2). `~` is expanded;
    whether the folder holds a usable model is checked when it is loaded (store.search.vectors)."""
    problems: list[str] = []
    if isinstance(project.get("search"), dict) and "vector_model" in project["search"]:
        problems.append(
            ".engram/config.json: search.vector_model is ignored in a workspace config (a clone may not "
            "name a path outside the workspace); set it in $ENGRAM_HOME/config.json"
        )
    section = user.get("search")
    value = section.get("vector_model", "") if isinstance(section, dict) else ""
    return (str(Path(value).expanduser()) if value else ""), problems
