"""The host's own rule that asks before the agent's shell runs engram's write commands (SPEC §7, §8).

The rest, and why: docs/design.md, `engram_mcp/hosts/gate/shell_rules.py`.
"""

from __future__ import annotations

import json
import re
from typing import Final

from engram_mcp.hosts.gate.gate import COMMIT_TOOL, READ_TOOLS, SERVER
from engram_mcp.hosts.link.launch import pinned

WRITE_COMMANDS: Final = (
    "commit",
    "save-session",
    "ss",
    "add",
    "edit",
    "forget",
    "restore",
    "verify",
    "pending",
    "promote",
    "note",
    "gc",
    "init",
    "link",
    "unlink",
    "upgrade",
)
"""Sub-commands that write memory, accept changes or change a host's gate. `verify`,
`save-session` and `pending` ask whatever their flags (`--accept`, `--force`, `--cancel` may be
abbreviated); their reads are engram's MCP tools."""

GEMINI_ALLOWED_TOOLS: Final = (*READ_TOOLS, "engram_save", "engram_save_session")
"""What headless Gemini may run unasked: the read tools and the two proposal tools."""

MARK: Final = "engram:shell-rules"
"""The mark of a rules file engram manages (Codex, Gemini); anything else there is the user's."""


def _pin(name: str, bare: bool) -> tuple[str, list[str]]:
    """How link names `name`: its pin (launch.pinned), or with `bare` the name alone (the form
    a committed file has)."""
    return (name, []) if bare else pinned(name)


def spellings(bare: bool = False) -> list[str]:
    """Each way an agent's shell may start engram: `engram`, then the pin link writes."""
    command, args = _pin("engram", bare)
    words = [command, *args]
    found = ["engram"]
    pin = " ".join(f'"{w}"' if " " in w else w for w in words)
    if pin not in found:
        found.append(pin)
    return found


def argv_spellings(bare: bool = False) -> list[list[str]]:
    command, args = _pin("engram", bare)
    return [["engram"]] + ([[command, *args]] if [command, *args] != ["engram"] else [])


def server_argv_spellings(bare: bool = False) -> list[list[str]]:
    """Each way to start the server itself: an agent that starts `engram-mcp` in its shell is
    its client, proposes and answers engram's dialog or calls engram_commit with no host in
    between, so the host's shell asks before that too."""
    command, args = _pin("engram-mcp", bare)
    return [["engram-mcp"]] + ([[command, *args]] if [command, *args] != ["engram-mcp"] else [])


def server_spellings(bare: bool = False) -> list[str]:
    return [" ".join(f'"{w}"' if " " in w else w for w in argv) for argv in server_argv_spellings(bare)]


def _is_pin(spelling: str, name: str) -> bool:
    """Whether `spelling` is a pin link may have written for `name` on some machine: a path to
    a script of that name, or a Python running engram's module with `-m`."""
    words = spelling.split('"')[1::2] if spelling.startswith('"') else spelling.split(" ")
    program = words[0] if words else ""
    rest = spelling[len(program) + (2 if spelling.startswith('"') else 0) :].strip()
    module = "engram_mcp" if name == "engram-mcp" else "engram_mcp.cli"
    if rest:
        return "python" in program.rsplit("/", 1)[-1].lower() and rest in (f"-P -m {module}", f"-m {module}")
    base = program.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".exe")
    return base == name and ("/" in program or "\\" in program)


def stale_claude_rule(rule: str) -> bool:
    """A `permissions.ask` rule in the shape `claude_rules` writes, for another pin of engram
    than today's (say this machine's path, after PATH was fixed): link takes it out."""
    if rule in claude_rules() or not (rule.startswith("Bash(") and rule.endswith(")")):
        return False
    inner = rule[len("Bash(") : -1]
    for suffix in (*(f" {command} *" for command in WRITE_COMMANDS), " -*"):
        if inner.endswith(suffix) and _is_pin(inner[: -len(suffix)], "engram"):
            return True
    return _is_pin(inner.removesuffix(" *"), "engram-mcp")


def stale_opencode_pattern(pattern: str) -> bool:
    """A `permission.bash` pattern in the shape `opencode_patterns` writes, for another pin."""
    if pattern in opencode_patterns():
        return False
    for suffix in (*(f" {command} *" for command in WRITE_COMMANDS), " -*"):
        if pattern.endswith(suffix) and _is_pin(pattern[: -len(suffix)], "engram"):
            return True
    return False


# --- Claude Code ------------------------------------------------------------------------------
def claude_rules() -> list[str]:
    """The `permissions.ask` rules `engram link claude` adds."""
    rules = []
    for spelling in spellings():
        rules += [f"Bash({spelling} {command} *)" for command in WRITE_COMMANDS]
        rules.append(f"Bash({spelling} -*)")
    for spelling in server_spellings():
        rules += [f"Bash({spelling})", f"Bash({spelling} *)"]
    return rules


# --- opencode ---------------------------------------------------------------------------------
OPENCODE_OTHER_SPELLINGS: Final = (
    "*/engram *",
    "* engram *",
    "*'engram *",
    '*"engram *',
    "*\\engram *",
    "*engram-mcp*",
    "*engram_mcp*",
)
"""Every other way to start engram that opencode's patterns can see: a path to it (`/home/me/
.venv/bin/engram add …`), a wrapper before it (`env -u OPENCODE engram add …`, `sudo`,
`xargs`), a quoted command (`sh -c 'engram add …'`, `script -qc "…"`), `\\engram` past an alias,
the server itself, and `python -m engram_mcp`. opencode's default runs any bash command
unasked, and with the plain spellings alone a model ran engram by its absolute path and
wrote memory (make hosts-e2e). Each asks, reads included; only the plain `engram search …`
form of the read commands runs unasked (engram's reads are its MCP tools anyway)."""


def opencode_patterns() -> list[str]:
    """The `permission.bash` patterns `engram link opencode` sets to "ask"."""
    patterns = []
    for spelling in spellings():
        patterns += [f"{spelling} {command} *" for command in WRITE_COMMANDS]
        patterns.append(f"{spelling} -*")
    return [*patterns, *(p for p in OPENCODE_OTHER_SPELLINGS if p not in patterns)]


# --- Codex ------------------------------------------------------------------------------------
CODEX_FILE: Final = "engram.rules"


def codex_text(bare: bool = False) -> str:
    """The whole `engram.rules` file (Starlark) `engram link codex` writes."""
    lines = [
        f"# {MARK} installed by `engram link codex`; `engram unlink codex` removes this file.",
        "# engram's CLI writes (commit, save-session --force, add, …) are the human's approval only",
        "# when the human runs them: Codex asks before its agent runs any engram command.",
    ]
    for argv in [*argv_spellings(bare), *server_argv_spellings(bare)]:
        pattern = ", ".join(json.dumps(word) for word in argv)
        lines += [
            "prefix_rule(",
            f"    pattern = [{pattern}],",
            '    decision = "prompt",',
            '    justification = "engram writes memory only with the human\'s yes",',
            ")",
        ]
    return "\n".join(lines) + "\n"


# --- Gemini CLI -------------------------------------------------------------------------------
GEMINI_FILE: Final = "engram.toml"
GEMINI_ASK_PRIORITY: Final = 950
GEMINI_ALLOW_PRIORITY: Final = 100


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def gemini_prefixes(bare: bool = False) -> list[str]:
    writes = [f"{spelling} {command}" for spelling in spellings(bare) for command in WRITE_COMMANDS]
    return [*writes, *server_spellings(bare)]


def _regex_escape(text: str) -> str:
    """Escape for a JavaScript regex (Gemini's), leaving `-` and `/` alone (an escaped `-` is an
    error under the `u` flag)."""
    return re.sub(r"([.\\^$|?*+()\[\]{}])", r"\\\1", text)


def gemini_text(bare: bool = False) -> str:
    """The whole policy file `engram link gemini` writes to `~/.gemini/policies/`."""
    regex = "(?:" + "|".join(_regex_escape(s) for s in spellings(bare)) + ")" + r"\s+-"
    lines = [
        f"# {MARK} installed by `engram link gemini`; `engram unlink gemini` removes this file.",
        "# engram's read and proposal tools run unasked; engram_commit and the shell's engram",
        "# writes ask the human (headless Gemini denies them).",
        "",
        "[[rule]]",
        f'mcpName = "{SERVER}"',
        f"toolName = {_toml_list(list(GEMINI_ALLOWED_TOOLS))}",
        'decision = "allow"',
        f"priority = {GEMINI_ALLOW_PRIORITY}",
        "",
        "[[rule]]",
        f'mcpName = "{SERVER}"',
        f'toolName = "{COMMIT_TOOL}"',
        'decision = "ask_user"',
        f"priority = {GEMINI_ASK_PRIORITY}",
        "",
        "[[rule]]",
        'toolName = "run_shell_command"',
        f"commandPrefix = {_toml_list(gemini_prefixes(bare))}",
        'decision = "ask_user"',
        f"priority = {GEMINI_ASK_PRIORITY}",
        "",
        "[[rule]]",
        'toolName = "run_shell_command"',
        f"commandRegex = {json.dumps(regex)}",
        'decision = "ask_user"',
        f"priority = {GEMINI_ASK_PRIORITY}",
    ]
    return "\n".join(lines) + "\n"
