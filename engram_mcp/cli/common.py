"""What every `engram` command shares: the y/N question, argument checks, and CLI wording.

The tools speak to agents ("call engram_commit with this approval_token"); the CLI speaks to
the human at a terminal, naming commands and flags. Every next step an operation or the store
names is a value (engram_mcp.outcome.Hint, the store's Next), worded here (`cli_wording`) and
for the tools in engram_mcp.ops.wording. A test runs every command and finds no tool or
argument name in what it prints.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any, Final

from engram_mcp.errors import Fixable, UsageError
from engram_mcp.outcome import Hint
from protocol.validation import compile_validator
from store.files.ids import ID_RULE, is_valid_id

_FIXED: Final = {
    "fetch_body": "print a body with `engram load --id ID`",
    "list_ids": "`engram list` shows every id",
    "find_ids": "`engram list` shows the ids",
    "search_or_save": "Search with `engram search WORDS`, or add knowledge with `engram add`.",
    "route_task": "or `engram route TASK` for a task description",
    "save_instead": "add one with `engram add`",
    "approve": "--approve",
    "approve_forms": '--approve takes "all" or candidate numbers like 1,3',
}


def cli_wording(hint: Hint) -> str:
    """The CLI's words for a hint (engram_mcp.outcome.HINT_KINDS; the tools' are in
    engram_mcp.ops.wording): the command or flag, where the tools name the tool call."""
    if hint.kind == "token":
        return f"approval token: {hint.arg('token')} (expires {hint.arg('expires')})"
    if hint.kind == "commit":
        token = hint.arg("token")
        return (
            f"Nothing is saved until you commit: `engram commit {token}` saves every candidate, "
            f"`engram commit {token} --approve 1,3` only those numbers."
        )
    if hint.kind in _FIXED:
        return _FIXED[hint.kind]
    raise ValueError(f"no CLI wording for the hint {hint.kind!r}")


def confirm(question: str, *, yes: bool, action: str) -> bool:
    """The human's y/N at the terminal; `--yes` answers for them. Off a terminal without
    `--yes` nothing is asked: Fixable names the flag (`action` says what it would do)."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise Fixable(
            "ENGRAM_NOT_CONFIRMED",
            f"not on a terminal, so nothing was asked and nothing was written: pass --yes to {action}",
        )
    print(question + " [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


_ARGUMENT: Final = re.compile(r"argument '([A-Za-z_]+)(?:\[\d+\])?'(?: =)?")


def checked(
    schema: dict[str, Any], arguments: dict[str, Any], flags: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Validate CLI arguments with the tool's own schema, so both accept exactly the same;
    problems name the flag (`--budget 5 is out of range`), not the tool argument
    (`argument 'budget_tokens'`). UsageError when something is wrong."""
    present = {k: v for k, v in arguments.items() if v is not None}
    problems = compile_validator(schema)(present)
    if problems:
        names = flags or {}
        raise UsageError(
            "; ".join(_ARGUMENT.sub(lambda m: names.get(m.group(1), m.group(1)), p) for p in problems)
        )
    return present


def memory_id_arg(flag: str, value: str | None) -> str | None:
    """An id given on the command line; UsageError saying what an id looks like."""
    if value is not None and not is_valid_id(value):
        raise UsageError(f"{flag} {value[:80]!r} is not a memory id: {ID_RULE}")
    return value
