"""`engram import SOURCE [PATH]`: what users already wrote for other hosts, as candidates.

The rest, and why: docs/design.md, `engram_mcp/intake/importers.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NoReturn

import yaml

from engram_mcp.errors import Fixable
from store.files.git import run_git
from store.files.memory import provenance
from store.plurals import count
from store.safety import untrusted

SOURCES: Final = ("claude-md", "agents-md", "cursor-rules", "copilot", "claude-memory")
MAX_CANDIDATES: Final = 100
MAX_FILE_BYTES: Final = 512 * 1024
MAX_TITLE: Final = 90


@dataclass(slots=True)
class Imported:
    where: str
    candidates: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


def _named(path: Path, workspace: Path, given: str | None) -> str:
    """A path as the user knows it: as they typed it, else relative to the workspace."""
    return untrusted.line(given if given is not None else _shown(path, workspace), 300)


def _check_file(source: str, path: Path, workspace: Path, given: str | None) -> None:
    """Fixable unless `path` is a regular file engram may read (`import claude-md
    /nonexistent.md` answered "nothing to import from nonexistent.md", as if the file were empty)."""
    named = _named(path, workspace, given)
    fix = f"name the file: `engram import {source} PATH`"
    try:
        if not path.exists():
            raise Fixable("ENGRAM_NOT_FOUND", f"{named} does not exist; {fix}")
        if path.is_dir():
            raise Fixable("ENGRAM_NOT_FOUND", f"{named} is a folder, not a file; {fix}")
        if not path.is_file():
            raise Fixable("ENGRAM_NOT_FOUND", f"{named} is not a regular file; {fix}")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise Fixable(
                "ENGRAM_VALIDATION",
                f"{named} is over {MAX_FILE_BYTES // 1024} KB, more than instructions for a host hold; "
                "split it, or import the part that holds them",
            )
        with path.open("rb"):
            pass
    except OSError as exc:
        raise Fixable("ENGRAM_NOT_FOUND", f"{named}: cannot read it ({exc.strerror}); {fix}") from None


def _missing(source: str, where: str) -> NoReturn:
    """Fixable: none of the files a source reads by default is in the workspace."""
    raise Fixable(
        "ENGRAM_NOT_FOUND", f"no {where} in the workspace; name the file: `engram import {source} PATH`"
    )


def _read(path: Path) -> str:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return ""
        return path.read_bytes().decode("utf-8", "replace").removeprefix("\ufeff").replace("\r\n", "\n")
    except OSError:
        return ""


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Lenient front matter for other hosts' files (a Cursor `globs: *.ts` is not YAML)."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1:
        return {}, text
    block, body = text[4:end], text[end + 4 :].lstrip("\n")
    try:
        meta = yaml.safe_load(block)
    except yaml.YAMLError:
        meta = None
    if not isinstance(meta, dict):
        meta = {}
        for line in block.splitlines():
            name, sep, value = line.partition(":")
            if sep:
                meta[name.strip()] = value.strip()
    return meta, body


def _globs(value: Any) -> list[str]:
    if isinstance(value, list):
        items = [str(v) for v in value]
    elif isinstance(value, str):
        items = value.split(",")
    else:
        items = []
    return [g.strip().strip("\"'") for g in items if g and g.strip()][:20]


_RULE: Final = re.compile(r"\b(always|never|must|don'?t|do not)\b", re.I)
_WEAK_RULE: Final = re.compile(r"\b(avoid|only|should not|shouldn'?t|prefer)\b", re.I)
_PROCEDURE: Final = re.compile(
    r"\b(command|commands|build|run|setup|set up|install|workflow|how to|steps?|release|deploy|test(s|ing)?)\b",
    re.I,
)
_DECISION: Final = re.compile(r"\b(decided|decision|we chose|instead of|chosen)\b", re.I)
_GOTCHA: Final = re.compile(r"\b(gotcha|careful|beware|pitfall|caveat|watch out|warning)\b", re.I)
_FACT: Final = re.compile(r"\b(architecture|overview|structure|layout|about)\b", re.I)


def _type(heading: str, text: str) -> str:
    if _GOTCHA.search(heading) or _GOTCHA.search(text):
        return "gotcha"
    if _DECISION.search(text) or _DECISION.search(heading):
        return "decision"
    if _RULE.search(text):
        return "rule"
    if _PROCEDURE.search(heading) or "```" in text:
        return "procedure"
    if _FACT.search(heading):
        return "fact"
    if _WEAK_RULE.search(text):
        return "rule"
    return "convention"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]


def _title(heading: str, text: str) -> str:
    first = re.sub(r"[`*#]", "", text.strip().splitlines()[0]).strip()
    first = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0].rstrip(".:")
    if len(first) > MAX_TITLE:
        first = first[: MAX_TITLE - 1].rsplit(" ", 1)[0] + "…"
    return first or heading or "imported"


_BOILERPLATE: Final = re.compile(r"This file provides guidance to ", re.I)
"""The first line `/init` writes into CLAUDE.md: about the file, not the project."""
_ITEM: Final = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


def markdown_candidates(text: str, source: str, paths: list[str] | None = None) -> list[dict[str, Any]]:
    """One candidate per top-level list item or paragraph; code blocks join the item before."""
    blocks: list[tuple[str, str]] = []
    heading = ""
    current: list[str] = []
    fence = ""

    def close() -> None:
        if current and "".join(current).strip():
            blocks.append((heading, "\n".join(current).strip("\n")))
        current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if fence:
            current.append(line)
            if stripped.startswith(fence):
                fence = ""
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            if not current and blocks and blocks[-1][0] == heading:
                current.extend(blocks.pop()[1].splitlines())  # the code block belongs to the item before
            current.append(line)
            continue
        if re.match(r"^#{1,6}\s", stripped):
            close()
            heading = stripped.lstrip("#").strip()
            continue
        if not stripped:
            close()
            continue
        if stripped.startswith(("<!--", "@")) and not current:
            continue  # comments and Claude's @imports carry no knowledge of their own
        if _ITEM.match(line):  # a top-level item starts a candidate
            close()
            current.append(_ITEM.sub("", line, count=1))
            continue
        current.append(line.strip() if not line.startswith("  ") else line)
    close()
    out = []
    for where, body in blocks:
        if len(body) < 12 or _BOILERPLATE.match(body):
            continue
        tags = [t for t in (_slug(where), source) if t]
        candidate: dict[str, Any] = {
            "type": _type(where, body),
            "title": _title(where, body),
            "body": body + provenance(f"{source}, section “{where}”" if where else source),
            "tags": list(dict.fromkeys(tags)),
        }
        if paths:
            candidate["paths"] = paths
        out.append(candidate)
    return out


def _claude_project_dir(workspace: Path, home: Path) -> Path:
    """`~/.claude/projects/<git root, non-alphanumerics as ->/memory/` (worktrees share it)."""
    root = workspace
    common = run_git(workspace, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if common and common.strip():
        found = Path(common.strip())
        root = found.parent if found.name == ".git" else root
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(root)) / "memory"


_CLAUDE_TYPES: Final = {"user": "preference", "feedback": "rule", "project": "decision", "reference": "fact"}


def claude_memory(folder: Path) -> list[dict[str, Any]]:
    """Auto-memory topic files, one candidate each; MEMORY.md lines that are not links to a
    topic file are candidates too (older memories were written straight into it)."""
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.md")):
        if path.name == "MEMORY.md":
            continue
        meta, body = _front_matter(_read(path))
        if not body.strip():
            continue
        name = str(meta.get("name") or meta.get("description") or path.stem.replace("-", " "))
        kind = _CLAUDE_TYPES.get(str(meta.get("type", "")), _type("", body))
        text = body.strip()
        if meta.get("description") and str(meta["description"]) not in text:
            text = f"{meta['description']}\n\n{text}"
        out.append(
            {
                "type": kind,
                "title": _title("", name),
                "body": text + provenance("Claude Code auto memory"),
                "tags": ["claude-memory"],
                "scope": "user" if meta.get("type") == "user" else "project",
            }
        )
    index = _read(folder / "MEMORY.md")
    if index:
        kept = "\n".join(line for line in index.splitlines() if not re.search(r"\]\([^)]+\.md\)", line))
        out.extend(markdown_candidates(kept, "claude-memory"))
    return out


def read(source: str, workspace: Path, path: str | None = None, home: Path | None = None) -> Imported:
    """The candidates of one source (at most MAX_CANDIDATES; the note says how many more)."""
    home = home or Path.home()
    found: Imported
    if source in ("claude-md", "agents-md"):
        default = ["CLAUDE.md", ".claude/CLAUDE.md"] if source == "claude-md" else ["AGENTS.md"]
        files = [Path(path)] if path else [workspace / d for d in default]
        target = next((f for f in files if f.is_file()), files[0])
        if path is None and not target.is_file():
            _missing(source, " or ".join(default))
        _check_file(source, target, workspace, path)
        found = Imported(_shown(target, workspace), markdown_candidates(_read(target), source))
    elif source == "copilot":
        target = Path(path) if path else workspace / ".github" / "copilot-instructions.md"
        extras = [] if path else sorted((workspace / ".github" / "instructions").glob("*.instructions.md"))
        if path is None and not target.is_file() and not extras:
            _missing(source, ".github/copilot-instructions.md or .github/instructions/*.instructions.md")
        if path is not None or target.exists():
            _check_file(source, target, workspace, path)
        found = Imported(_shown(target, workspace), markdown_candidates(_read(target), source))
        for extra in extras:
            meta, body = _front_matter(_read(extra))
            found.candidates += markdown_candidates(body, source, _globs(meta.get("applyTo")))
    elif source == "cursor-rules":
        target = Path(path) if path else workspace / ".cursor" / "rules"
        legacy = workspace / ".cursorrules"
        if path is None and not target.is_dir() and not legacy.is_file():
            _missing(source, ".cursor/rules/*.mdc or .cursorrules")
        if path is not None and not target.is_dir():
            _check_file(source, target, workspace, path)
        files = sorted(target.rglob("*.mdc")) if target.is_dir() else [target] if path else []
        found = Imported(_shown(target, workspace))
        for rule in files:
            meta, body = _front_matter(_read(rule))
            if not body.strip():
                continue
            title = str(meta.get("description") or "") or _title("", body)
            candidate: dict[str, Any] = {
                "type": _type(title, body) if _type(title, body) != "convention" else "rule",
                "title": _title("", title),
                "body": body.strip() + provenance(f"Cursor rule {rule.name}"),
                "tags": ["cursor-rules", _slug(rule.stem)],
            }
            if globs := _globs(meta.get("globs")):
                candidate["paths"] = globs
            found.candidates.append(candidate)
        if not path and legacy.is_file():
            found.candidates += markdown_candidates(_read(legacy), "cursor-rules")
    elif source == "claude-memory":
        target = Path(path) if path else _claude_project_dir(workspace, home)
        where = str(target).replace(str(home), "~", 1)
        if not target.is_dir():
            raise Fixable(
                "ENGRAM_NOT_FOUND",
                f"{untrusted.line(path if path is not None else where, 300)} "
                + ("is not a folder" if target.exists() else "does not exist")
                + (
                    ""
                    if path
                    else ": Claude Code has kept no auto memory for this project yet (or name its folder: "
                    "`engram import claude-memory PATH`)"
                ),
            )
        found = Imported(where, claude_memory(target))
    else:  # pragma: no cover - argparse limits the choices
        raise ValueError(source)
    if len(found.candidates) > MAX_CANDIDATES:
        more = len(found.candidates) - MAX_CANDIDATES
        found.candidates = found.candidates[:MAX_CANDIDATES]
        found.note = (
            f"{count(more, 'more item')} {'was' if more == 1 else 'were'} not proposed: "
            "commit these, then import again"
        )
    return found


def _shown(path: Path, workspace: Path) -> str:
    try:
        return str(path.resolve().relative_to(workspace.resolve()))
    except (ValueError, OSError):
        return path.name
