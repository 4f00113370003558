"""The files a host's gate needs outside the repository, which a clone does not bring
(`host.gate_file_missing`, SPEC §8).

Of the gates `engram link` writes for a project, only Gemini CLI's lives outside it: Gemini
reads no workspace policies, so its policy is `~/.gemini/policies/engram.toml` (rule_files.py).
The others are project files and travel with the repository: Claude Code's ask rules in
`.claude/settings.json`, Codex's approval modes in `.codex/config.toml` and its
`.codex/rules/engram.rules` (read once the project is trusted: a host step, steps.py),
opencode's `permission`, VS Code's `.vscode/settings.json`. A teammate whose project files name
engram but whose HOME has none of it is told the one command that adds it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from engram_mcp.hosts.doctor.findings import Finding
from engram_mcp.hosts.edits import read_quietly
from engram_mcp.hosts.gate.shell_rules import MARK
from engram_mcp.hosts.link.rule_files import rule_file

GATE_FILE_MISSING: Final = "host.gate_file_missing"

_HOSTS: Final = {"gemini": "Gemini CLI's policy for engram"}
"""What each rule file outside the repository is, as a person would name it."""


def missing(in_project: Mapping[str, str], workspace: Path, env: Mapping[str, str]) -> list[Finding]:
    """For each target whose project file (`in_project`: target → that file, shown) runs engram,
    each file its gate needs outside the workspace that is not engram's there."""
    found = []
    for target, config in in_project.items():
        rules = rule_file(target, False, workspace, env)
        if rules is None or rules.path.is_relative_to(workspace):  # committed with the project
            continue
        text = read_quietly(rules.path)
        if text is not None and MARK in text:  # engram's (an older one is `engram upgrade`'s)
            continue
        what = _HOSTS.get(target, f"engram's {target} rules")
        without = (
            "without it, the host's defaults and your own settings decide whether engram_commit "
            "and the shell's engram writes ask you"
        )
        if not os.path.lexists(rules.path):
            message = (
                f"{config} runs engram, but {what} is missing: it lives outside the repository, "
                f"so git does not bring it; {without}"
            )
            fix = f"run `engram link {target}`"
        else:
            message = f"{config} runs engram, but the file where {what} goes is not engram's; {without}"
            fix = f"move it, then run `engram link {target}`"
        found.append(Finding(GATE_FILE_MISSING, rules.shown, message, fix))
    return found
