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


SHELL_TOOLS = ("Bash", "run_shell_command", "shell", "bash")
"""The hosts' shell tools, by the names they offer the model."""
_REQUEST = re.compile(r"The human's request: `/engram ([^`]*)`")
_FORCE_RULE = re.compile(r"^1\. .*?run `([^`]+ save-session --force)` in the shell", re.S | re.M)


@dataclass
class CommandScript(Script):
    """The `/engram` scenario: a model that follows the installed command's text.

    When the conversation holds an expanded `/engram` command whose request is `ss -f` (or
    `save-session --force`), the model runs, through the host's shell tool, the command that
    the command text's rule 1 names; it reads that command from the text, it does not know it.
    Any other turn gets a short text answer."""

    shell_calls: list[str] = field(default_factory=list)
    shell_results: list[str] = field(default_factory=list)

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self.shell_calls.clear()
            self.shell_results.clear()

    def decide(self, turn: Turn) -> Action:
        with self._lock:
            self.requests += 1
            for name in [*turn.tools, *turn.deferred]:
                if name not in self.offered:
                    self.offered.append(name)
            ran = [text for name, text in turn.history if name in SHELL_TOOLS]
            self.shell_results[:] = ran
        shell = next((name for name in turn.tools if name in SHELL_TOOLS), None)
        if ran or shell is None:
            return Text("Done." if ran else "Noted.")
        for text in reversed(turn.texts):
            request, rule = _REQUEST.search(text), _FORCE_RULE.search(text)
            if (
                request
                and rule
                and request.group(1).split()[:2] in (["ss", "-f"], ["save-session", "--force"])
            ):
                with self._lock:
                    self.shell_calls.append(rule.group(1))
                return ToolCall(
                    shell, {"command": rule.group(1), "description": "Save this session to engram"}
                )
        return Text("Noted.")
