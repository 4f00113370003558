"""What every `engram` command shares: the y/N question, argument checks, CLI wording, and the
top-level parser (commands listed by group; a near miss named).

The tools speak to agents ("call engram_commit with this approval_token"); the CLI speaks to
the human at a terminal, naming commands and flags. Every next step an operation or the store
names is a value (store.errors.Next), worded here (`cli_wording`) and
for the tools in engram_mcp.ops.wording. A test runs every command and finds no tool or
argument name in what it prints.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
import sys
import textwrap
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final

from engram_mcp.errors import Fixable, UsageError
from protocol.validation import compile_validator
from store.files.ids import ID_RULE, is_valid_id
from store.safety import untrusted


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


GROUPS: Final = (
    ("Start", ("init", "status", "doctor", "link", "unlink", "upgrade")),
    ("Memory", ("add", "list", "show", "search", "route", "load", "index", "edit", "forget", "restore")),
    ("Review", ("pending", "commit", "verify", "stale", "history", "ui")),
    ("Session", ("save-session", "note", "promote", "gc", "import", "export")),
    ("For hosts", ("hook",)),
)
"""The top-level help's groups, in the order a person meets them (a flat list of 28
commands in no order). A command in no group is listed under "Other", never left out."""


class CommandParser(argparse.ArgumentParser):
    """`engram`'s top-level parser: its help lists the commands by group (GROUPS), each with
    its one-line help, instead of argparse's flat list (its subparsers action is SUPPRESSed)."""

    def commands(self) -> dict[str, tuple[str, str]]:
        """Every command: its name as listed (`save-session (ss)`) and its one-line help."""
        found: dict[str, tuple[str, str]] = {}
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    found[choice.dest] = (str(choice.metavar or choice.dest), choice.help or "")
        return found

    def names(self) -> list[str]:
        """Every command name and alias."""
        return [
            name
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
            for name in action.choices
        ]

    def format_help(self) -> str:
        head = self._get_formatter()
        head.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        head.add_text(self.description)
        tail = self._get_formatter()
        for group in self._action_groups:
            shown = [a for a in group._group_actions if a.help is not argparse.SUPPRESS]
            if shown:
                tail.start_section(group.title)
                tail.add_arguments(shown)
                tail.end_section()
        tail.add_text(self.epilog)
        return head.format_help() + "\n" + grouped(self.commands()) + "\n" + tail.format_help()


def grouped(commands: Mapping[str, tuple[str, str]], width: int | None = None) -> str:
    """The commands under their GROUPS headings, help wrapped to the terminal's width."""
    width = width or max(shutil.get_terminal_size().columns - 2, 60)
    listed = {name for _, names in GROUPS for name in names}
    groups = [*GROUPS, ("Other", tuple(name for name in commands if name not in listed))]
    column = min(max(len(shown) for shown, _ in commands.values()) + 4, 24) if commands else 0
    lines: list[str] = []
    for title, names in groups:
        present = [name for name in names if name in commands]
        if not present:
            continue
        lines.append(f"{title}:")
        for name in present:
            shown, help_text = commands[name]
            wrapped = textwrap.wrap(help_text, max(width - column, 30)) or [""]
            first = f"  {shown}".ljust(column)
            if len(first) > column:  # a long name gets a line of its own
                lines.append(first.rstrip())
                first = " " * column
            lines.append(first + wrapped[0])
            lines += [" " * column + more for more in wrapped[1:]]
        lines.append("")
    return "\n".join(lines)


_VALUED: Final = frozenset({"--workspace"})
"""The top-level options that take the next word as their value."""
_OWN: Final = frozenset({"-h", "--help", "--version"})


def unknown_command(argv: Sequence[str], names: Collection[str]) -> str | None:
    """The message for a first word that names no command (`engram lsit`): the closest command
    names and aliases (difflib), or where the commands are listed. None when the word is a
    command, or when there is none (or `--help`, `--version` come first: argparse answers)."""
    words = iter(argv)
    for word in words:
        if word in _OWN:
            return None
        if word in _VALUED:
            next(words, None)
            continue
        if word.startswith("-"):
            continue
        if word in names:
            return None
        said = f"engram: unknown command {untrusted.line(word, 60)!r}."
        return f"{said} {did_you_mean(word, names) or '`engram --help` lists the commands.'}"
    return None


def did_you_mean(word: str, names: Iterable[str]) -> str | None:
    """`Did you mean 'list'?` (or `'a', 'b' or 'c'`) for the names closest to `word`
    (difflib, at most three), or None when none is close."""
    close = difflib.get_close_matches(word, sorted(names), n=3, cutoff=0.6)
    if not close:
        return None
    named = [repr(name) for name in close]
    return f"Did you mean {named[0] if len(named) == 1 else ', '.join(named[:-1]) + ' or ' + named[-1]}?"
