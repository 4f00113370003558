"""Codex's `config.toml` (user `~/.codex/config.toml` or project `.codex/config.toml`): engram's
managed block, added and removed as text.

The rest, and why: docs/design.md, `engram_mcp/hosts/formats/codex_toml.py`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from typing import Any, Final

from engram_mcp.hosts.errors import TomlError
from engram_mcp.hosts.gate.gate import COMMIT_TOOL, READ_TOOLS

MARKER: Final = "# managed by engram: `engram unlink codex` removes this block"


def loads(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except RecursionError:  # a clone's `a = [[[…` a thousand deep
        raise TomlError("arrays or tables nested too deeply") from None
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        raise TomlError(str(exc).split(" (at ")[0], int(where.group(1)) if where else None) from None


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def block(command: str, args: Sequence[str], newline: str = "\n") -> str:
    lines = [
        MARKER,
        "[mcp_servers.engram]",
        f"command = {_quote(command)}",
        "args = [" + ", ".join(_quote(a) for a in args) + "]",
        "",
        "[mcp_servers.engram.tools]",
        f'{COMMIT_TOOL} = {{ approval_mode = "prompt" }}',
        *(f'{tool} = {{ approval_mode = "approve" }}' for tool in READ_TOOLS),
    ]
    return newline.join(lines) + newline


def entry(text: str) -> dict[str, Any] | None:
    """The `mcp_servers.engram` table as parsed, or None."""
    servers = loads(text).get("mcp_servers")
    found = servers.get("engram") if isinstance(servers, dict) else None
    return found if isinstance(found, dict) else None


def _span(text: str) -> tuple[int, int] | None:
    """Character span of the managed block (marker line to its last line), or None."""
    start = text.find(MARKER)
    if start == -1 or (start > 0 and text[start - 1] != "\n"):
        return None
    lines = text[start:].splitlines(keepends=True)
    end = start
    for n, line in enumerate(lines):
        stripped = line.strip()
        header = stripped.startswith("[")
        ours = stripped.startswith(("[mcp_servers.engram]", "[mcp_servers.engram."))
        if n > 0 and header and not ours:
            break
        end += len(line)
    # the block ends at its last non-blank line; blank lines after it belong to the file
    body = text[start:end]
    trimmed = body.rstrip("\r\n")
    newline = "\r\n" if body[len(trimmed) :].startswith("\r\n") else "\n"
    return start, start + len(trimmed) + (len(newline) if len(trimmed) < len(body) else 0)


def has_block(text: str) -> bool:
    return _span(text) is not None


def add(text: str, command: str, args: Sequence[str]) -> str:
    """Append the managed block (the caller checked there is no engram entry yet)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith("\n"):
        text += newline
    separator = newline if text.strip() else ""
    result = text + separator + block(command, args, newline)
    loads(result)
    return result


_ENGRAM_HEADER: Final = re.compile(r'\[\[?\s*mcp_servers\s*\.\s*("engram"|\'engram\'|engram)\s*[\].]')
"""A table header of engram's entry or one of its sub-tables (`[mcp_servers.engram.env]`)."""


def _drop_tables(text: str) -> tuple[str, list[str]]:
    """`text` without its engram tables (each header to the next header), and their headers."""
    kept: list[str] = []
    dropped: list[str] = []
    dropping = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            dropping = _ENGRAM_HEADER.match(stripped) is not None
            if dropping:
                dropped.append(stripped.split("]")[0] + "]")
        if not dropping:
            kept.append(line)
    return "".join(kept), dropped


def stray_tables(text: str) -> list[str]:
    """The headers of engram tables outside the managed block (`[mcp_servers.engram.env]` put
    after another table), which `replace` removes."""
    span = _span(text)
    if span is None:
        return []
    return _drop_tables(text[: span[0]])[1] + _drop_tables(text[span[1] :])[1]


def replace(text: str, command: str, args: Sequence[str]) -> str:
    """Rewrite the managed block in place (re-pin), and remove every engram table outside it
    (`stray_tables`): TOML merges them into the entry, so an env there would survive the
    re-pin. An entry that still holds more than the block's keys is refused.

    Raises:
        TomlError: the result does not parse, or keeps engram settings outside the block."""
    span = _span(text)
    assert span is not None
    newline = "\r\n" if "\r\n" in text else "\n"
    fresh = block(command, args, newline)
    head, tail = _drop_tables(text[: span[0]])[0], _drop_tables(text[span[1] :])[0]
    result = head + fresh + tail
    if entry(result) != entry(fresh):
        raise TomlError(
            "the engram entry has settings outside engram's managed block that it cannot remove "
            "(a dotted key or an inline table); remove every other mcp_servers.engram setting by hand"
        )
    return result


def remove(text: str) -> str:
    """Remove the managed block and the blank line `add` put before it."""
    span = _span(text)
    if span is None:
        return text
    start, end = span
    before = text[:start]
    if before.endswith("\r\n\r\n"):
        before = before[:-2]
    elif before.endswith("\n\n"):
        before = before[:-1]
    elif before.strip() == "":
        before = ""
    result = before + text[end:]
    loads(result)
    return result


def remove_foreign(text: str) -> str:
    """Drop `[mcp_servers.engram]` and its sub-tables written by someone else (`--force`)."""
    kept: list[str] = []
    dropping = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            dropping = stripped.startswith(("[mcp_servers.engram]", "[mcp_servers.engram."))
        if not dropping:
            kept.append(line)
    result = "".join(kept)
    if entry(result) is not None:
        raise TomlError("the engram entry is not a [mcp_servers.engram] table; remove it by hand")
    return result
