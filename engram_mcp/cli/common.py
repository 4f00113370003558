"""What every `engram` command shares: the y/N question, argument checks, and CLI wording.

The operations under `engram_mcp/` and `store/` speak to agents ("call engram_commit with this
approval_token"); the CLI speaks to the human at a terminal, naming commands and flags. A next
step an operation names as a value (engram_mcp.outcome.Hint) is worded here (`cli_wording`);
the phrases still written into text by the store are translated on the way out, in one table
(`WORDING`). A test runs every command and finds no tool or argument name in what it prints.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any, Final

from engram_mcp.errors import Fixable, UsageError
from engram_mcp.outcome import Hint, Wording
from protocol.validation import compile_validator
from store.files.ids import ID_RULE, is_valid_id


def cli_wording(hint: Hint) -> str:
    """The CLI's words for a hint (engram_mcp.outcome.Hint; the tools' are in
    engram_mcp.ops.previews): the command to run, where the tools name the tool call."""
    if hint.kind == "token":
        return f"approval token: {hint.arg('token')} (expires {hint.arg('expires')})"
    if hint.kind == "commit":
        token = hint.arg("token")
        return (
            f"Nothing is saved until you commit: `engram commit {token}` saves every candidate, "
            f"`engram commit {token} --approve 1,3` only those numbers."
        )
    raise ValueError(f"no CLI wording for the hint {hint.kind!r}")


CLI_COMMIT_HINT: Final[Wording] = cli_wording
"""How the CLI's previews end: the wording `token_outcome` takes (the name its callers import)."""

WORDING: Final = (
    ("approval_token: ", "approval token: "),
    ('fetch a body with engram_load {"id": "<id>"}', "print a body with `engram load --id ID`"),
    (
        "Search with engram_search, or propose knowledge with engram_save.",
        "Search with `engram search WORDS`, or add knowledge with `engram add`.",
    ),
    ("or engram_route for a task description", "or `engram route TASK` for a task description"),
    ("search with engram_search to find ids", "`engram list` shows the ids"),
    ("engram://index lists every id", "`engram list` shows every id"),
    ("; call engram_save with candidates instead", "; add one with `engram add`"),
    ("approve names ", "--approve names "),
    (
        'approve takes "all", an array of candidate numbers like [1, 3], or a string like "1,3"',
        '--approve takes "all" or candidate numbers like 1,3',
    ),
)
"""(the tools' phrase, the CLI's) — every agent-facing phrase a CLI command can print."""


def human(text: str) -> str:
    """`text` in CLI wording: commands and flags instead of tool and argument names."""
    for tool_words, cli_words in WORDING:
        text = text.replace(tool_words, cli_words)
    return text


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
