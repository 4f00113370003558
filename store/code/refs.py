"""Code references (`refs:`): their grammar, the definition check, and extraction from text.

The rest, and why: docs/design.md, `store/code/refs.py`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from store.files.fs_platform import slashed
from store.files.git import repository, run_git

MAX_REFS: Final = 20
MAX_REF_LENGTH: Final = 300
MAX_SCAN_BYTES: Final = 2 * 1024 * 1024
"""A cited file larger than this is checked for existence only (its symbols are not read)."""
MAX_WALK_FILES: Final = 20000
MAX_SCAN_FILES: Final = 2000
"""Without git, identifiers are looked for in at most this many source files per proposal."""
SOURCE_SUFFIXES: Final = frozenset(
    [
        ".py",
        ".pyi",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".go",
        ".rs",
        ".rb",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".swift",
        ".php",
        ".lua",
        ".ex",
        ".exs",
        ".erl",
        ".hs",
        ".ml",
        ".clj",
        ".dart",
        ".sh",
        ".bash",
        ".zsh",
        ".r",
        ".jl",
        ".sql",
        ".vue",
        ".svelte",
    ]
)
_SKIP_DIRS: Final = frozenset(
    {".git", ".engram", "node_modules", ".venv", "venv", "__pycache__", "dist", "build"}
)

_MODIFIERS: Final = (
    r"(?:(?:export|default|pub(?:\([^)\n]*\))?|public|private|protected|internal|static|async|abstract|"
    r"final|override|inline|extern|unsafe|open|sealed|data|declare|readonly)\s+)*"
)
_KEYWORDS: Final = (
    r"(?:def|class|function\*?|func|fn|struct|enum|trait|interface|type|module|object|impl|const|let|var|val)"
)
_DEFINITION: Final = re.compile(
    rf"^[ \t]*{_MODIFIERS}{_KEYWORDS}[ \t]+(?:mut[ \t]+)?(?:\([^)\n]*\)[ \t]*)?([A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_ASSIGNMENT: Final = re.compile(r"^[ \t]*([A-Za-z_$][\w$]*)[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE)


def defined_names(text: str) -> frozenset[str]:
    """Every NAME the definition check finds in a file's text."""
    found = {m.group(1) for m in _DEFINITION.finditer(text)}
    found.update(m.group(1) for m in _ASSIGNMENT.finditer(text))
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Ref:
    """One parsed reference: `path` (or a glob), and the symbol it names, if any."""

    text: str
    path: str
    symbol: str = ""
    glob: bool = False


_LINE: Final = re.compile(r":[0-9]+(?:-[0-9]+)?$")


def parse_ref(text: str) -> Ref | None:
    """A reference from its written form; None when it could name something outside the
    workspace on any platform (absolute, `..`, a drive or another `:`, a control character;
    see the module docstring) or is empty. `\\` reads as `/`."""
    value = text.strip()
    if not value or len(value) > MAX_REF_LENGTH or any(ord(ch) < 32 for ch in value):
        return None
    path, _, symbol = value.partition("#")
    path = _LINE.sub("", slashed(path)).removeprefix("./")
    if not path or path.startswith("/") or ":" in path:
        return None
    if any(_climbs(part) for part in path.rstrip("/").split("/")):
        return None
    symbol = symbol.strip().rsplit(".", 1)[-1].removesuffix("()")
    if symbol and not re.fullmatch(r"[A-Za-z_$][\w$]*[!?]?", symbol):
        return None
    return Ref(value, path.rstrip("/"), symbol, any(ch in path for ch in "*?["))


def ref_path(text: str) -> str:
    """The path a written reference names, read as `parse_ref` reads it (`\\` as `/`, a line
    dropped) but without its checks: for matching against paths git reported, never for opening."""
    path = slashed(text.partition("#")[0].strip())
    return (_LINE.sub("", path) if ":" in path else path).removeprefix("./")


def _climbs(part: str) -> bool:
    """An empty name, `..`, or a name Windows shortens to one (only dots and spaces; `.` stays)."""
    return part != "." and not part.rstrip(". ")


def invalid_refs(values: Iterable[str]) -> list[str]:
    """The written references that `parse_ref` refuses."""
    return [v for v in values if parse_ref(v) is None]


def memory_refs(values: Sequence[str]) -> tuple[Ref, ...]:
    """A memory's references (`Memory.refs`: the strings of its front-matter `refs`); a refused
    one is kept as a Ref with an empty path, so staleness can name it."""
    out = []
    for value in values[: MAX_REFS * 5]:
        parsed = parse_ref(value)
        out.append(parsed if parsed is not None else Ref(value, ""))
    return tuple(out)


# --- extraction at proposal time ------------------------------------------------------------
_PATH_TOKEN: Final = re.compile(
    r"(?<![\w/.:#-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,10}|(?:[\w.-]+/)+[\w.-]+)(#[A-Za-z_$][\w$.]*)?"
)
_BACKTICKS: Final = re.compile(r"`([^`\n]{1,200})`")
_CODE_WORD: Final = re.compile(r"\b([A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)\b")
_IDENT: Final = re.compile(r"[A-Za-z_$][\w$]*")


_LISTED: dict[str, tuple[tuple[object, ...], tuple[str, ...]]] = {}
"""Workspace → (the stamp of its repository's index file, what `git ls-files` listed then)."""


def tracked_files(workspace: Path) -> list[str] | None:
    """Workspace-relative paths of the files git tracks here; None where git is not there.

    `ls-files --cached` lists the index and nothing else, and git replaces the index file
    (a new inode) whenever it changes it, so the listing is kept while the index file's
    stat is the same: a proposal no longer starts a git process."""
    where = os.path.abspath(workspace)
    stamp = _index_stamp(workspace)
    held = _LISTED.get(where)
    if stamp is not None and held is not None and held[0] == stamp:
        return list(held[1])
    out = run_git(workspace, "ls-files", "-z", "--cached")
    if out is None:
        return None
    found = [p for p in out.split("\0") if p]
    if stamp is not None and _index_stamp(workspace) == stamp:  # not changed while git read it
        _LISTED[where] = (stamp, tuple(found))
    return found


def _index_stamp(workspace: Path) -> tuple[object, ...] | None:
    """The repository's index file as stat sees it; None when there is none to watch (no
    repository, or a `.git` file of a worktree or submodule, whose index lies elsewhere)."""
    found = repository(workspace)
    if found is None or not os.path.isdir(found[0]):
        return None
    try:
        info = os.stat(found[0] / "index")
    except OSError:
        return None
    return (str(found[0]), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def workspace_files(workspace: Path) -> list[str]:
    """A bounded walk of the workspace (no git) that skips .git, .engram and build folders."""
    found: list[str] = []
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        rel = os.path.relpath(folder, workspace)
        for name in sorted(files):
            found.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
            if len(found) >= MAX_WALK_FILES:
                return found
    return found


def _identifiers(text: str) -> list[str]:
    names: list[str] = []
    for span in _BACKTICKS.findall(text):
        span = span.strip().removesuffix("()")
        if "/" in span or " " in span:
            continue
        last = span.rsplit(".", 1)[-1]
        if _IDENT.fullmatch(last) and len(last) >= 3:
            names.append(last)
    names += [m.group(1) for m in _CODE_WORD.finditer(text)]
    return list(dict.fromkeys(names))[:MAX_REFS]


def _read_names(workspace: Path, rel: str) -> frozenset[str]:
    full = workspace / rel
    try:
        if not full.is_file() or full.stat().st_size > MAX_SCAN_BYTES:
            return frozenset()
        return defined_names(full.read_bytes().decode("utf-8", "replace"))
    except OSError:
        return frozenset()


def _mentioning(workspace: Path, files: Sequence[str], names: Sequence[str], git: bool) -> list[str]:
    """Source files whose text holds one of `names` as a word (git grep where git is there)."""
    sources = [f for f in files if os.path.splitext(f)[1].lower() in SOURCE_SUFFIXES]
    if git and sources:
        args = ["grep", "-l", "-I", "-w", "-F"]
        for name in names:
            args += ["-e", name]
        out = run_git(workspace, *args, "--", *(f"*{suffix}" for suffix in sorted(SOURCE_SUFFIXES)))
        if out is None:
            return []
        listed = set(sources)
        return [p for p in out.splitlines() if p in listed]
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b")
    hits = []
    for rel in sources[:MAX_SCAN_FILES]:
        try:
            full = workspace / rel
            if full.stat().st_size <= MAX_SCAN_BYTES and pattern.search(
                full.read_bytes().decode("utf-8", "replace")
            ):
                hits.append(rel)
        except OSError:
            continue
    return hits


def listing(workspace: Path) -> tuple[list[str], bool]:
    """(the files references may name, whether git listed them)."""
    tracked = tracked_files(workspace)
    if tracked is not None:
        return [p for p in tracked if not p.startswith(".engram/")], True
    return workspace_files(workspace), False


def extract(
    workspace: Path, title: str, body: str, files: Sequence[str] | None = None, *, git: bool = False
) -> list[str]:
    """The references a candidate's title and body name: existing paths first (as written in
    the text, or the one tracked file with that name), then `path#NAME` for identifiers a
    tracked source file defines. At most MAX_REFS."""
    text = f"{title}\n{body}"
    if files is None:
        files, git = listing(workspace)
    known = set(files)
    by_name: dict[str, list[str]] = {}
    for rel in files:
        by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    refs: list[str] = []
    cited: list[str] = []
    for match in _PATH_TOKEN.finditer(text):
        token = match.group(1).rstrip(".").removeprefix("./")
        if "://" in text[max(0, match.start() - 8) : match.start() + 3]:
            continue
        path = token if token in known else None
        if path is None and "/" not in token and len(by_name.get(token, ())) == 1:
            path = by_name[token][0]
        if path is None:
            continue
        cited.append(path)
        symbol = (match.group(2) or "").lstrip("#")
        refs.append(f"{path}#{symbol}" if symbol else path)
    names = [n for n in _identifiers(text) if not any(n in r.rsplit("#", 1)[-1] for r in refs)]
    if names:
        definers: dict[str, list[str]] = {}
        for rel in _mentioning(workspace, files, names, git):
            defined = _read_names(workspace, rel)
            for name in names:
                if name in defined:
                    definers.setdefault(name, []).append(rel)
        for name in names:
            where = definers.get(name, [])
            chosen = where[0] if len(where) == 1 else next((p for p in where if p in cited), None)
            if chosen is not None:
                refs.append(f"{chosen}#{name}")
    refs = list(dict.fromkeys(refs))
    # a path cited on its own is implied by a path#NAME of the same file
    with_symbol = {r.split("#", 1)[0] for r in refs if "#" in r}
    return [r for r in refs if "#" in r or r not in with_symbol][:MAX_REFS]
