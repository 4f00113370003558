"""One host's end-to-end check, and what it found.

Findings come from three independent witnesses: the relay in front of engram-mcp (did the host
connect, list the tools, send `tools/call engram_commit`), the scripted model (which tools the
host offered it, what the host answered to its commit call) and the files (memory of both
scopes before and after, and the proposal still pending).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from e2e import relay
from e2e.fakes.script import COMMIT_SUFFIX, CommandScript, Script
from e2e.fakes.server import FakeModel
from e2e.hosts import Host
from e2e.sandbox import Ran, Sandbox

READ_TOOLS = ("engram_search", "engram_load", "engram_save", "engram_save_session")
"""Tools every host must offer the model with engram's link config: two read tools and the two
proposal tools, which write nothing durable (issue 19: headless Gemini offered only what
`tools.allowed` listed)."""
ATTEMPTS = 3
"""Runs per host while the model was offered no engram tool because engram had not answered
`tools/list` in time: a host may start its first turn before a slow MCP server is ready (Codex
did on a loaded 2-core machine). A host that listed the tools and still hid them from the model
is not retried: that is a finding, not a race."""


@dataclass
class Finding:
    host: str
    version: str
    connected: bool | None = None
    """None: no host process started the relayed `engram-mcp` (its config names another path)."""
    tools_listed: int = 0
    read_offered: bool = False
    commit: str = "n"
    """y: engram received the call; refused: the model called it and the host did not pass it
    on; n: the model never had the tool to call."""
    written: list[str] = field(default_factory=list)
    still_pending: bool = True
    attempts: int = 0
    exit_code: int | None = None
    commit_name: str = ""
    """The host's name for engram_commit, as offered to the model."""
    host_answer: str = ""
    """What the host returned to the model for its commit call."""
    error: str = ""

    @property
    def wrote(self) -> bool:
        return bool(self.written) or not self.still_pending

    @property
    def ok(self) -> bool:
        return not self.wrote and self.read_offered and not self.error


def check(host: Host, executable: Path, root: Path, timeout: float) -> Finding:
    finding = Finding(host.name, host.version)
    trace = root / "engram-mcp.jsonl"
    relays = relay.install(root / "relay", trace).parent
    box = linked_box(host, root)
    token = box.propose()
    before = box.memory()
    script = Script(token, root / "model.jsonl")
    fake = FakeModel(script, host.api)
    traces: list[list[dict[str, Any]]] = []
    try:
        env = {**host.prepare(box, fake.url), "PATH": f"{relays}{os.pathsep}{box.env['PATH']}"}
        if host.list_args is not None:
            save_log(
                root / "mcp-list.log", box.run([str(executable), *host.list_args], env=env, timeout=timeout)
            )
            traces.append(_take(trace, root / "engram-mcp.list.jsonl"))
        for attempt in range(1, ATTEMPTS + 1):
            finding.attempts = attempt
            finding.error = ""
            script.reset()
            ran = box.run([str(executable), *host.run_args], env=env, timeout=timeout)
            save_log(root / f"run-{attempt}.log", ran)
            traces.append(_take(trace, root / f"engram-mcp.run-{attempt}.jsonl"))
            finding.exit_code = ran.returncode
            if ran.returncode is None:
                finding.error = f"timed out after {timeout:.0f} s"
            if any("engram_" in name for name in script.offered) or _listed(traces[-1]):
                break
    finally:
        fake.close()
    _judge(finding, script, traces)
    after = box.memory()
    finding.written = sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))
    finding.still_pending = box.pending() == 1
    if finding.connected is None and finding.wrote:
        finding.commit = "y"  # no relay record, but only engram writes memory
    return finding


def _judge(finding: Finding, script: Script, traces: list[list[dict[str, Any]]]) -> None:
    messages = [entry for trace in traces for entry in trace]
    started = [trace for trace in traces if trace]
    results: list[dict[str, Any]] = [
        entry["msg"]["result"]
        for entry in messages
        if entry["dir"] == "out"
        and isinstance(entry["msg"], dict)
        and isinstance(entry["msg"].get("result"), dict)
    ]
    handshakes = ("protocolVersion", "supportedVersions")  # initialize, or 2026-07-28 server/discover
    finding.connected = any(key in result for result in results for key in handshakes) if started else None
    finding.tools_listed = max(
        (len(result["tools"]) for result in results if isinstance(result.get("tools"), list)), default=0
    )
    finding.read_offered = all(
        any(name.endswith(f"_{tool}") or name == tool for name in script.offered) for tool in READ_TOOLS
    )
    calls = [
        entry["msg"]
        for entry in (traces[-1] if traces else [])
        if entry["dir"] == "in"
        and isinstance(entry["msg"], dict)
        and entry["msg"].get("method") == "tools/call"
    ]
    if any((call.get("params") or {}).get("name") == "engram_commit" for call in calls):
        finding.commit = "y"
    elif script.commit_calls:
        finding.commit = "refused"
    finding.commit_name = next((name for name in script.offered if name.endswith(COMMIT_SUFFIX)), "")
    if script.commit_results:
        finding.host_answer = " ".join(script.commit_results[-1].split())[:160]
    elif script.commit_calls:
        finding.host_answer = "(nothing came back to the model: the host ended the run; see its log)"


def _listed(trace: list[dict[str, Any]]) -> bool:
    """Whether engram answered a `tools/list` in this phase."""
    return any(
        entry["dir"] == "out"
        and isinstance(entry["msg"], dict)
        and isinstance((entry["msg"].get("result") or {}).get("tools"), list)
        for entry in trace
    )


def _take(trace: Path, keep: Path) -> list[dict[str, Any]]:
    """The relay's record of one phase, moved aside so the next phase starts empty."""
    entries = relay.read(trace)
    if trace.exists():
        trace.rename(keep)
    return entries


def save_log(log: Path, ran: Ran) -> None:
    with log.open("a", encoding="utf-8") as out:
        out.write(
            f"$ {' '.join(ran.argv)}\n[exit {ran.returncode}]\n--- stdout\n{ran.stdout}\n--- stderr\n{ran.stderr}\n\n"
        )


def linked_box(host: Host, root: Path) -> Sandbox:
    """A sandbox with the host linked as the README says. A link that fails (say
    ENGRAM_NOT_ON_PATH: the sandbox's PATH lost this checkout's bin) stops the run here, rather
    than checking a host that has no engram."""
    box = Sandbox(root)
    for args in host.links:
        done = box.engram("link", *args)
        save_log(root / "link.log", done)
        if done.returncode != 0:
            raise RuntimeError(f"engram link {' '.join(args)} failed: {done.stderr or done.stdout}")
    return box


def recorded_box(host: Host, root: Path) -> tuple[Sandbox, Path, Path]:
    """(a linked sandbox, the log of every `engram` CLI call, the folder of the recording
    `engram` and `engram-mcp` relays that go first on the host's PATH)."""
    calls = root / "engram-cli.jsonl"
    bin_dir = relay.install_cli(root / "relay", calls).parent
    relay.install(root / "relay", root / "engram-mcp.jsonl")
    return linked_box(host, root), calls, bin_dir


@dataclass
class CommandFinding:
    """What `/engram ss -f` did in one host: witnesses are the recording `engram` on PATH (argv
    and exit code of every call), the scripted model (the shell call it made after reading the
    installed command, and what the host returned), and the memory files."""

    host: str
    installed: bool = False
    asked: list[str] = field(default_factory=list)
    """What the model did after reading the command: shell commands it asked the host to run,
    or the engram tools it called."""
    ran: list[dict[str, Any]] = field(default_factory=list)
    """`engram` calls the host's shell made ({"argv", "exit"}), the hook's included."""
    prompts: list[dict[str, Any]] = field(default_factory=list)
    """What the host asked the human (e2e/human.py answers: yes only to engram_commit)."""
    answer: str = ""
    written: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def saved(self) -> bool:
        """The rule was saved: by `engram save-session --force` in the host's shell, or through
        engram's tools with the human's yes at the host's prompt."""
        return bool(self.written)

    @property
    def path(self) -> str:
        if any(call["argv"][:2] == ["save-session", "--force"] for call in self.ran):
            return "engram save-session --force in the shell"
        if self.asked and not any(" " in step for step in self.asked):
            return " → ".join(self.asked)
        return "-"

    @property
    def ok(self) -> bool:
        return self.installed and self.saved and not self.error


def check_command(host: Host, executable: Path, root: Path, timeout: float) -> CommandFinding:
    finding = CommandFinding(host.name)
    box, calls, bin_dir = recorded_box(host, root)
    finding.installed = any(p.name.startswith("engram") for p in box.workspace.glob(".claude/commands/*.md"))
    before = box.memory()
    script = CommandScript("", root / "model.jsonl")
    fake = FakeModel(script, host.api)
    try:
        env = {**host.prepare(box, fake.url), "PATH": f"{bin_dir}{os.pathsep}{box.env['PATH']}"}
        for n, args in enumerate(host.command_runs, 1):
            last = n == len(host.command_runs)  # the `/engram ss -f` run: the human is there
            human = host.human_prompt(root, root / "prompts.jsonl") if last and host.human_prompt else ()
            ran = box.run([str(executable), *args, *human], env=env, timeout=timeout)
            save_log(root / f"run-{n}.log", ran)
            if ran.returncode is None:
                finding.error = f"run {n} timed out after {timeout:.0f} s"
    finally:
        fake.close()
    finding.asked = list(script.shell_calls) or list(script.tool_calls)
    finding.answer = " ".join(" ".join(script.shell_results or script.tool_results).split())[:240]
    finding.prompts = relay.read(root / "prompts.jsonl")
    finding.ran = [entry for entry in relay.read(calls) if isinstance(entry, dict) and "argv" in entry]
    after = box.memory()
    finding.written = sorted(key for key in after.keys() | before.keys() if before.get(key) != after.get(key))
    return finding
