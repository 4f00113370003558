"""What the scripted model does, whatever API it is reached through.

Every request is recorded. A request that offers tools is the agent's turn: the tools offered
are recorded; if the conversation already holds a tool result the model ends with plain text,
otherwise it calls the host's name for engram's commit tool with the pending token and
`approve: "all"`. A request without tools (title generation, summaries, routing) gets a short
text answer so the host never stalls waiting for the model.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COMMIT_SUFFIX = "engram_commit"
"""Hosts prefix MCP tool names differently; every spelling ends with this."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Text:
    text: str


Action = ToolCall | Text


@dataclass(frozen=True, slots=True)
class Turn:
    """One model request as the script sees it, whatever the wire API."""

    tools: list[str]
    """Names the model may call now."""
    deferred: list[str] = field(default_factory=list)
    """Names the host announced but only loads through `loader` (Claude Code's ToolSearch)."""
    history: list[tuple[str, str]] = field(default_factory=list)
    """(tool name, result text) for every tool result already in the conversation."""
    loader: str | None = None
    texts: list[str] = field(default_factory=list)
    """Every text in the conversation so far (user turns, expanded commands, reminders)."""


@dataclass
class Script:
    """The scenario, and what the host showed the model along the way."""

    token: str
    log_path: Path
    offered: list[str] = field(default_factory=list)
    commit_calls: list[str] = field(default_factory=list)
    commit_results: list[str] = field(default_factory=list)
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        """Forget what earlier runs showed; the log keeps growing."""
        with self._lock:
            self.offered.clear()
            self.commit_calls.clear()
            self.commit_results.clear()
            self.requests = 0

    def log(self, entry: dict[str, Any]) -> None:
        with self._lock, self.log_path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry, default=str) + "\n")

    def decide(self, turn: Turn) -> Action:
        """The next answer to one request."""
        with self._lock:
            self.requests += 1
            for name in [*turn.tools, *turn.deferred]:
                if name not in self.offered and name != turn.loader:
                    self.offered.append(name)
            answered = [text for name, text in turn.history if name.endswith(COMMIT_SUFFIX)]
            for text in answered:
                if text not in self.commit_results:
                    self.commit_results.append(text)
        if not turn.tools:
            return Text("engram e2e")
        if answered:
            return Text("Done: the commit tool answered.")
        commit = next((name for name in turn.tools if name.endswith(COMMIT_SUFFIX)), None)
        if commit is not None:
            with self._lock:
                self.commit_calls.append(commit)
            return ToolCall(commit, {"approval_token": self.token, "approve": "all"})
        later = next((name for name in turn.deferred if name.endswith(COMMIT_SUFFIX)), None)
        loaded = any(name == turn.loader for name, _ in turn.history)
        if later is not None and turn.loader in turn.tools and not loaded:
            return ToolCall(turn.loader, {"query": f"select:{later}"})
        return Text("engram_commit is not among my tools.")


SHELL_TOOLS = ("Bash", "run_shell_command", "shell", "exec_command", "bash")
"""The hosts' shell tools, by the names they offer the model."""
_REQUEST = re.compile(r"The human's request: `/engram ([^`]*)`")
_FORCE_RULE = re.compile(r"^1\. .*?run `([^`]+ save-session --force)` in the shell", re.S | re.M)
_TOOL_RULE = re.compile(r"^1\. [^\n]*\n(?:   [^\n]*\n)*?.*?call the `(engram_save_session)` tool", re.M)
_HOST = re.compile(r'^1\. [^\n]*\n(?:   [^\n]*\n)*?.*?`host` "([a-z-]+)"', re.M)
_TOKEN = re.compile(r"engram-[0-9a-f]{8}-[A-Za-z0-9_-]{32}")
_ADD = re.compile(r"^\s*(\d+)\. (?:Verdict: )?ADD\b", re.M)
SAVE_SUFFIX = "engram_save_session"


@dataclass
class CommandScript(Script):
    """The `/engram` scenario: a model that follows the installed command's text.

    When the conversation holds an expanded `/engram` command whose request is `ss -f` (or
    `save-session --force`), the model does what the command text's rule 1 says, reading it
    from the text (it knows nothing else): either it runs the shell command rule 1 names
    through the host's shell tool, or, when rule 1 says to call `engram_save_session`, it calls
    that tool (`query_level` 1, and the `host` the text names), then `engram_commit` with the proposal's token and the numbers
    of its ADD candidates (loading either through the host's tool loader when deferred). Any
    other turn gets a short text answer."""

    shell_calls: list[str] = field(default_factory=list)
    shell_results: list[str] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)
    """engram tools the model called, in order."""
    tool_results: list[str] = field(default_factory=list)

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self.shell_calls.clear()
            self.shell_results.clear()
            self.tool_calls.clear()
            self.tool_results.clear()

    def decide(self, turn: Turn) -> Action:
        with self._lock:
            self.requests += 1
            for name in [*turn.tools, *turn.deferred]:
                if name not in self.offered:
                    self.offered.append(name)
            ran = [text for name, text in turn.history if name in SHELL_TOOLS]
            self.shell_results[:] = ran
            answered = [(n, t) for n, t in turn.history if n.endswith((SAVE_SUFFIX, COMMIT_SUFFIX))]
            self.tool_results[:] = [f"{n}: {t}" for n, t in answered]
        if not turn.tools:
            return Text("engram e2e")
        rule, text = self._rule(turn)
        if rule is None:
            return Text("Noted.")
        if rule != SAVE_SUFFIX:
            shell = next((name for name in turn.tools if name in SHELL_TOOLS), None)
            if ran or shell is None:
                return Text("Done." if ran else "Noted.")
            with self._lock:
                self.shell_calls.append(rule)
            return ToolCall(shell, {"command": rule, "description": "Save this session to engram"})
        saved = [text for name, text in answered if name.endswith(SAVE_SUFFIX)]
        if any(name.endswith(COMMIT_SUFFIX) for name, _ in answered):
            return Text("Done: engram answered.")
        if not saved:
            host = _HOST.search(text)
            return self._call(
                turn, SAVE_SUFFIX, {"query_level": 1, **({"host": host.group(1)} if host else {})}
            )
        token = _TOKEN.search(saved[-1])
        if token is None:  # nothing to commit (or engram's dialog already did)
            return Text("Done: engram answered.")
        adds = [int(n) for n in _ADD.findall(saved[-1])]
        return self._call(turn, COMMIT_SUFFIX, {"approval_token": token.group(), "approve": adds or "all"})

    def _rule(self, turn: Turn) -> tuple[str | None, str]:
        """What rule 1 of the expanded `/engram ss -f` says (a shell command, or the tool's
        suffix; None when the conversation holds no such request), and the command's text."""
        for text in reversed(turn.texts):
            request = _REQUEST.search(text)
            if not request or request.group(1).split()[:2] not in (["ss", "-f"], ["save-session", "--force"]):
                continue
            if shell := _FORCE_RULE.search(text):
                return shell.group(1), text
            if _TOOL_RULE.search(text):
                return SAVE_SUFFIX, text
        return None, ""

    def _call(self, turn: Turn, suffix: str, arguments: dict[str, Any]) -> Action:
        name = next((n for n in turn.tools if n.endswith(suffix)), None)
        if name is not None:
            with self._lock:
                self.tool_calls.append(name)
            return ToolCall(name, arguments)
        later = next((n for n in turn.deferred if n.endswith(suffix)), None)
        if later is not None and turn.loader in turn.tools:
            return ToolCall(turn.loader, {"query": f"select:{later}"})
        return Text(f"{suffix} is not among my tools.")


def shell_arguments(tool: str, command: str, *, tty: bool = False) -> dict[str, Any]:
    """One call of a host's shell tool running `command`, in that tool's own argument shape."""
    if tool == "exec_command":  # Codex's unified exec: `tty` asks for a PTY; no login shell,
        # whose profile may reset PATH (Debian's /etc/profile does for root)
        return {"cmd": command, "login": False, **({"tty": True} if tty else {})}
    if tool == "shell":  # Codex's older shell tool: an argv
        return {"command": ["bash", "-lc", command]}
    if tool == "Bash":
        return {"command": command, "description": "Run one command"}
    return {"command": command}  # opencode `bash`, Gemini `run_shell_command`


@dataclass
class ShellScript(Script):
    """A model that runs `commands` through the host's shell tool, one call per turn, in order,
    then ends; with `tty`, it asks for a terminal for the last one where the tool offers one
    (Codex). It sees
    whatever the host answers (`shell_results`, in call order), and knows nothing of engram."""

    commands: list[str] = field(default_factory=list)
    tty: bool = False
    shell_calls: list[str] = field(default_factory=list)
    shell_results: list[str] = field(default_factory=list)
    shell_tool: str = ""
    """The name of the shell tool the host offered, or empty when it offered none."""

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self.shell_calls.clear()
            self.shell_results.clear()
            self.shell_tool = ""

    def decide(self, turn: Turn) -> Action:
        with self._lock:
            self.requests += 1
            for name in [*turn.tools, *turn.deferred]:
                if name not in self.offered:
                    self.offered.append(name)
            self.shell_results[:] = [text for name, text in turn.history if name in SHELL_TOOLS]
            shell = next((name for name in turn.tools if name in SHELL_TOOLS), None)
            if shell is not None:
                self.shell_tool = shell
            done = len(self.shell_results)
        if not turn.tools:
            return Text("engram e2e")
        if shell is None or done >= len(self.commands):
            return Text("Done." if done else "I have no shell tool.")
        command = self.commands[done]
        with self._lock:
            self.shell_calls.append(command)
        return ToolCall(
            shell, shell_arguments(shell, command, tty=self.tty and done == len(self.commands) - 1)
        )
