"""The host config files `engram link` edits, as the host suites see them: the target table
(one `Case` per target and scope, with its realistic "before" file in fixtures/hosts/),
independent readers of each format (tomllib, json, a JSONC reader of our own, YAML front
matter), what engram's command must look like, and doctor's settings planted and read back."""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import run_json
from tests.support.files import write
from tests.support.paths import ENGRAM_MCP, FIXTURES

HOSTS = FIXTURES / "hosts"
BANNED = ("uvx", "npx", "pip", "pipx", "pip3")
"""Registry downloaders: never engram's command (SPEC §8)."""
COMMAND = json.dumps(ENGRAM_MCP)
"""This installation's `engram-mcp` as a JSON string, for settings planted with `CMD`."""


# --- reading what link wrote -----------------------------------------------------------------
_JSONC_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\r\n]*|/\*.*?\*/|[^"/]+|/', re.DOTALL)


def parse_jsonc(text: str) -> Any:
    """An independent JSONC reader: strip comments outside strings, then trailing commas."""
    out = []
    for tok in _JSONC_TOKEN.findall(text):
        if tok.startswith("//") or tok.startswith("/*"):
            out.append(" ")
        else:
            out.append(tok)
    stripped = "".join(out)
    # trailing commas: a comma followed only by whitespace before } or ] (outside strings)
    pieces = re.split(r'("(?:[^"\\]|\\.)*")', stripped)
    for i in range(0, len(pieces), 2):
        pieces[i] = re.sub(r",(\s*[}\]])", r"\1", pieces[i])
    return json.loads("".join(pieces))


def front_matter(text: str) -> dict[str, Any]:
    """The YAML front matter of a Markdown command file, {} when it has none."""
    if not text.startswith("---\n"):
        return {}
    data = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
    assert isinstance(data, dict), text[:200]
    return data


def parse(path: Path, fmt: str) -> Any:
    text = path.read_bytes().decode("utf-8")
    if fmt == "toml":
        return tomllib.loads(text)
    if fmt == "json":
        return json.loads(text)
    return parse_jsonc(text)


def assert_our_command(command: Any) -> None:
    """SPEC §8: `engram-mcp`, or an absolute path ending in engram-mcp; never a registry download."""
    assert isinstance(command, str), command
    assert Path(command).name not in BANNED
    assert command == "engram-mcp" or (os.path.isabs(command) and command.endswith("/engram-mcp")), command


# --- the target table ------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    id: str
    target: str
    global_: bool
    fixture: str | None
    """file in fixtures/hosts, or None: no file exists before link"""
    base: str
    """ws or home"""
    rel: str
    fmt: str
    container: tuple[str, ...]

    def argv(self) -> list[str]:
        return [self.target, *(["--global"] if self.global_ else [])]

    def path(self, workspace: Path, home: Path) -> Path:
        return (workspace if self.base == "ws" else home) / self.rel

    def shown(self) -> str:
        return self.rel if self.base == "ws" else f"~/{self.rel}"


CASES = [
    Case(
        "claude-ws", "claude", False, "claude-workspace.mcp.json", "ws", ".mcp.json", "json", ("mcpServers",)
    ),
    Case(
        "codex-global",
        "codex",
        True,
        "codex-global.config.toml",
        "home",
        ".codex/config.toml",
        "toml",
        ("mcp_servers",),
    ),
    Case(
        "codex-ws",
        "codex",
        False,
        "codex-workspace.config.toml",
        "ws",
        ".codex/config.toml",
        "toml",
        ("mcp_servers",),
    ),
    Case(
        "gemini-ws",
        "gemini",
        False,
        "gemini-workspace.settings.json",
        "ws",
        ".gemini/settings.json",
        "jsonc",
        ("mcpServers",),
    ),
    Case(
        "gemini-global",
        "gemini",
        True,
        "gemini-global.settings.json",
        "home",
        ".gemini/settings.json",
        "jsonc",
        ("mcpServers",),
    ),
    Case(
        "antigravity-global",
        "antigravity",
        True,
        "antigravity-global.mcp_config.json",
        "home",
        ".gemini/config/mcp_config.json",
        "json",
        ("mcpServers",),
    ),
    Case(
        "antigravity-legacy",
        "antigravity",
        True,
        "antigravity-legacy.mcp_config.json",
        "home",
        ".gemini/antigravity/mcp_config.json",
        "json",
        ("mcpServers",),
    ),
    Case(
        "cursor-ws",
        "cursor",
        False,
        "cursor-workspace.mcp.json",
        "ws",
        ".cursor/mcp.json",
        "jsonc",
        ("mcpServers",),
    ),
    Case(
        "cursor-global-crlf",
        "cursor",
        True,
        "cursor-global.mcp.json",
        "home",
        ".cursor/mcp.json",
        "jsonc",
        ("mcpServers",),
    ),
    Case(
        "opencode-ws-jsonc",
        "opencode",
        False,
        "opencode-workspace.opencode.jsonc",
        "ws",
        "opencode.jsonc",
        "jsonc",
        ("mcp",),
    ),
    Case(
        "opencode-global-jsonc",
        "opencode",
        True,
        "opencode-global.opencode.jsonc",
        "home",
        ".config/opencode/opencode.jsonc",
        "jsonc",
        ("mcp",),
    ),
    Case("opencode-ws-none", "opencode", False, None, "ws", "opencode.json", "jsonc", ("mcp",)),
    Case(
        "opencode-global-none",
        "opencode",
        True,
        None,
        "home",
        ".config/opencode/opencode.json",
        "jsonc",
        ("mcp",),
    ),
    Case(
        "windsurf-global",
        "windsurf",
        True,
        "windsurf-global.mcp_config.json",
        "home",
        ".codeium/windsurf/mcp_config.json",
        "json",
        ("mcpServers",),
    ),
    Case(
        "vscode-ws",
        "vscode",
        False,
        "vscode-workspace.mcp.json",
        "ws",
        ".vscode/mcp.json",
        "jsonc",
        ("servers",),
    ),
    Case(
        "vscode-global",
        "vscode",
        True,
        "vscode-global.mcp.json",
        "home",
        ".config/Code/User/mcp.json",
        "jsonc",
        ("servers",),
    ),
    Case(
        "claude-desktop-global",
        "claude-desktop",
        True,
        "claude-desktop-global.claude_desktop_config.json",
        "home",
        ".config/Claude/claude_desktop_config.json",
        "json",
        ("mcpServers",),
    ),
]


def case_named(case_id: str) -> Case:
    return next(c for c in CASES if c.id == case_id)


def place(case: Case, workspace: Path, home: Path) -> tuple[Path, bytes | None]:
    path = case.path(workspace, home)
    if case.fixture is None:
        return path, None
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HOSTS / case.fixture, path)
    return path, path.read_bytes()


# --- doctor ----------------------------------------------------------------------------------
def place_setting(workspace: Path, home: Path, base: str, rel: str, text: str) -> None:
    """Write one host setting file: `base` "ws" or "home", with CMD and "WS" filled in."""
    text = text.replace("CMD", COMMAND).replace('"WS"', json.dumps(str(workspace)))
    write((workspace if base == "ws" else home) / rel, text + "\n")


def gate_open(envelope: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["file"], f["message"]) for f in envelope["data"]["findings"] if f["code"] == "host.gate_open"]


def one_open_gate(capsys: pytest.CaptureFixture[str], base: str, rel: str) -> dict[str, Any]:
    """`engram doctor` exits 1 with exactly one host.gate_open finding, for the file planted at
    `base` ("ws" or "home") / `rel`, with the setting and the fix named; that finding."""
    rc, env = run_json(capsys, "doctor")
    assert rc == 1, env
    findings = [f for f in env["data"]["findings"] if f["code"] == "host.gate_open"]
    assert len(findings) == 1, findings
    [finding] = findings
    shown = rel if base == "ws" else f"~/{rel}"
    assert finding["file"].removeprefix("./") == shown
    assert finding["setting"] and finding["fix"]
    return finding
