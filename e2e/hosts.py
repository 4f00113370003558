"""The four hosts: pinned versions (the one place they are pinned), how each is linked, trusted,
pointed at the scripted model, listed and run headless with its default permissions.

Setup mirrors what a user does: `engram link <host>` (workspace scope) plus the global step
the host needs (Codex reads MCP servers only from `~/.codex/config.toml`), then the host's
own trust step for the workspace (Claude Code: approve the project's `.mcp.json` server;
Gemini CLI: trust the folder; Codex: trust the project) and the host's model settings. Nothing
here grants a tool permission: every run uses the host's default approval settings.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from e2e.fakes import anthropic, gemini, openai_chat, openai_responses
from e2e.fakes.server import Responder
from e2e.sandbox import Sandbox

PROMPT = "Commit the pending engram proposal."
RULE = "Remember that we always run make lint before every commit in this repository."
"""What the human says before `/engram ss -f` in the command scenario: what it must save."""


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    package: str
    version: str
    binary: str
    api: Responder
    links: tuple[tuple[str, ...], ...]
    """`engram link` argument lists, run in order."""
    prepare: Callable[[Sandbox, str], dict[str, str]]
    """Trust step and model settings; returns the environment the host runs with."""
    run_args: tuple[str, ...]
    list_args: tuple[str, ...] | None = None
    """The host's own `mcp list`, which connects to each server; None when it only reads config."""
    command_runs: tuple[tuple[str, ...], ...] = ()
    """The `/engram` scenario (check.check_command): a session where the human states a rule,
    then the same session continued with `/engram ss -f`; empty for hosts not driven yet."""
    human_prompt: Callable[[Path, Path], tuple[str, ...]] | None = None
    """Arguments that send the host's permission prompts of the `/engram` run to e2e/human.py
    (folder for its config, its log): headless, nobody else could answer them."""
    probe_args: tuple[str, ...] = ()
    """What lets the host's shell tool run at all, for e2e/shell.py's probe only (never the checks)."""


def _claude(box: Sandbox, url: str) -> dict[str, str]:
    # What answering Claude Code's two first-run dialogs records: trust this folder, and use
    # the project's .mcp.json server. `claude -p` connects without them; `claude mcp list` waits.
    workspace = {"hasTrustDialogAccepted": True}
    _merge_json(box.home / ".claude.json", {"projects": {str(box.workspace): workspace}})
    _merge_json(box.workspace / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["engram"]})
    return {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def _claude_human(folder: Path, log: Path) -> tuple[str, ...]:
    """Claude Code asks `mcp__human__approve` instead of showing its prompt, and runs the
    `Elicitation` hook instead of showing engram's dialog (`-p` can show neither)."""
    config = folder / "human-mcp.json"
    human = {"command": sys.executable, "args": [str(Path(__file__).with_name("human.py")), str(log)]}
    config.write_text(json.dumps({"mcpServers": {"human": human}}), "utf-8")
    dialog = f"{sys.executable} {Path(__file__).with_name('human.py')} --elicitation {log}"
    hook = {"matcher": "engram", "hooks": [{"type": "command", "command": dialog}]}
    settings = folder / "human-settings.json"
    settings.write_text(json.dumps({"hooks": {"Elicitation": [hook]}}), "utf-8")
    return (
        "--mcp-config",
        str(config),
        "--permission-prompt-tool",
        "mcp__human__approve",
        "--settings",
        str(settings),
    )


def _codex(box: Sandbox, url: str) -> dict[str, str]:
    config = box.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    # Codex gives an MCP server 1 s before a turn goes ahead without its tools
    # (mcp_optional_startup_grace_ms); a cold engram-mcp on a busy 2-core machine needs more.
    # 0 waits up to the server's startup timeout, as Codex did before 0.147.
    ours = (
        f'model = "{openai_responses.MODEL}"\n'
        'model_provider = "e2e"\n'
        "mcp_optional_startup_grace_ms = 0\n\n"
        "[model_providers.e2e]\n"
        'name = "engram e2e scripted model"\n'
        f'base_url = "{url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "E2E_API_KEY"\n\n'
        f"[projects.{json.dumps(str(box.workspace))}]\n"
        'trust_level = "trusted"\n\n'
    )
    # Top-level keys must come before any table, and engram's managed block is a table.
    config.write_text(ours + (config.read_text("utf-8") if config.exists() else ""), "utf-8")
    return {"E2E_API_KEY": "e2e-dummy"}


def _gemini(box: Sandbox, url: str) -> dict[str, str]:
    _merge_json(
        box.home / ".gemini" / "settings.json", {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    )
    _merge_json(box.home / ".gemini" / "trustedFolders.json", {str(box.workspace): "TRUST_FOLDER"})
    return {"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "e2e-dummy"}


def _opencode(box: Sandbox, url: str) -> dict[str, str]:
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "engram e2e scripted model",
        "options": {"baseURL": f"{url}/v1", "apiKey": "e2e-dummy"},
        "models": {openai_chat.MODEL: {"name": "e2e", "tool_call": True}},
    }
    config = box.root / "opencode-e2e.json"
    model = f"e2e/{openai_chat.MODEL}"
    settings = {
        "provider": {"e2e": provider},
        "model": model,
        "small_model": model,
        "autoupdate": False,
        "share": "disabled",
    }
    config.write_text(json.dumps(settings, indent=2), "utf-8")
    return {
        "OPENCODE_CONFIG": str(config),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
    }


def _merge_json(path: Path, values: dict[str, Any]) -> None:
    """Add `values` to a JSON file, object into object, keeping every other key (engram's too)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    current = json.loads(path.read_text("utf-8")) if path.exists() else {}
    path.write_text(json.dumps(_merged(current, values), indent=2), "utf-8")


def _merged(current: Any, values: Any) -> Any:
    if not (isinstance(current, dict) and isinstance(values, dict)):
        return values
    return {**current, **{key: _merged(current.get(key), value) for key, value in values.items()}}


HOSTS: tuple[Host, ...] = (
    Host(
        "claude",
        "@anthropic-ai/claude-code",
        "2.1.332",
        "claude",
        anthropic.respond,
        (("claude",),),
        _claude,
        ("-p", PROMPT, "--output-format", "stream-json", "--verbose"),
        ("mcp", "list"),
        (
            ("-p", RULE, "--output-format", "stream-json", "--verbose"),
            ("-p", "--continue", "/engram ss -f", "--output-format", "stream-json", "--verbose"),
        ),
        human_prompt=_claude_human,
        probe_args=("--allowedTools", "Bash"),
    ),
    Host(
        "codex",
        "@openai/codex",
        "0.171.0",
        "codex",
        openai_responses.respond,
        (("codex",), ("codex", "--global")),
        _codex,
        ("exec", "--json", PROMPT),
    ),
    Host(
        "gemini",
        "@google/gemini-cli",
        "0.61.0",
        "gemini",
        gemini.respond,
        (("gemini",),),
        _gemini,
        ("-p", PROMPT, "--output-format", "stream-json"),
        ("mcp", "list"),
        probe_args=("--approval-mode", "yolo"),
    ),
    Host(
        "opencode",
        "opencode-ai",
        "1.18.33",
        "opencode",
        openai_chat.respond,
        (("opencode",),),
        _opencode,
        ("run", "--format", "json", PROMPT),
        ("mcp", "list"),
    ),
)
