"""The per-tool approval rules `engram link` writes beside engram's entry (SPEC §8, gate.py).

The rest, and why: docs/design.md, `engram_mcp/hosts/gate/gate_rules.py`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from engram_mcp.hosts.errors import JsoncError, RuleError
from engram_mcp.hosts.formats import jsonc
from engram_mcp.hosts.gate import shell_rules
from engram_mcp.hosts.gate.gate import GEMINI_ALLOWED, OPENCODE_RULE, opencode_decision
from engram_mcp.hosts.gate.shell_audit import opencode_bash

_PERMISSION = ("permission",)
_ALLOWED = ("tools", "allowed")
_BASH = ("permission", "bash")
_ASK = ("permissions", "ask")
_AUTO_APPROVE = ("chat.tools.terminal.autoApprove",)

VSCODE_RULE = r"/\bengram(?!\/)/i"
"""Any command naming engram, its `engram-mcp` and `engram_mcp` included; not a path into
`.engram/` (reading memory files stays unasked)."""


def add(target: str, text: str, original: str | None = None) -> str:
    """`text` with engram's rules for `target` added (unchanged when they are there already);
    `original` is the file before engram first changed it."""
    if target == "opencode":
        return _add_bash(_add_opencode(text), original)
    if target == "gemini" and original is not None:  # an older link's tools.allowed entries
        return _remove_gemini(text, original)
    return text


def remove(target: str, text: str, original: str | None) -> str:
    """`text` without the rules `add` put there; rules present in `original` stay."""
    if target == "opencode":
        return _remove_opencode(_remove_bash(text, original), original)
    if target == "gemini":
        return _remove_gemini(text, original)
    return text


def _get(text: str | None, path: tuple[str, ...]) -> object:
    try:
        return jsonc.get(text, path) if text and text.strip() else None
    except JsoncError:
        return None


# --- opencode -----------------------------------------------------------------------------------
def _add_opencode(text: str) -> str:
    key, action = OPENCODE_RULE
    permission = _get(text, _PERMISSION)
    if isinstance(permission, str):
        if permission == "allow":
            raise RuleError(
                '"permission": "allow" runs every tool unasked and cannot take a per-tool rule; '
                f'write it as {{"*": "allow"}} so engram can add "{key}": "{action}", then link again'
            )
        return text  # "ask" or "deny" for every tool: the commit tool is not run unasked
    if permission is not None and not isinstance(permission, dict):
        raise RuleError('"permission" is neither an object nor "allow"/"ask"/"deny"; fix it by hand')
    text = jsonc.set_member(text, _PERMISSION, key, action)
    if opencode_decision(_get(text, _PERMISSION), key)[0] != action:
        # a later rule (say "engram_*": "allow") still wins: opencode's last match decides, so
        # engram's rule moves to the end
        text = jsonc.remove_member(text, _PERMISSION, key, prune=False)
        text = jsonc.set_member(text, _PERMISSION, key, action)
    return text


def _remove_opencode(text: str, original: str | None) -> str:
    key, action = OPENCODE_RULE
    if _get(text, (*_PERMISSION, key)) != action or _get(original, (*_PERMISSION, key)) == action:
        return text
    return jsonc.remove_member(text, _PERMISSION, key, prune=_get(original, _PERMISSION) is None)


# --- Gemini CLI -----------------------------------------------------------------------------------
# --- opencode's shell ------------------------------------------------------------------------------
def _probe(pattern: str) -> str:
    return pattern.replace(" *", " x").replace("*", "x")


def _add_bash(text: str, original: str | None = None) -> str:
    text = _drop_stale_bash(text, original)
    permission = _get(text, _PERMISSION)
    patterns = shell_rules.opencode_patterns()
    if all(opencode_bash(permission, _probe(p))[0] in ("ask", "deny") for p in patterns):
        return text  # the user's rules ask (or refuse) already: "ask" for every tool, say
    bash = _get(text, _BASH)
    if bash is not None and not isinstance(bash, (dict, str)):
        raise RuleError('"permission.bash" is neither an object nor a string; fix it by hand')
    if bash == "allow":
        text = jsonc.set_member(text, _PERMISSION, "bash", {"*": "allow"})
    for pattern in patterns:
        current = _get(text, _BASH)
        keys = list(current) if isinstance(current, dict) else []
        if pattern in keys:
            ours = shell_rules.opencode_patterns()
            later = [k for k in keys[keys.index(pattern) + 1 :] if k not in ours]
            if current[pattern] == "ask" and not any(_covers_too(k, pattern) for k in later):  # type: ignore[index]
                continue
            text = jsonc.remove_member(text, _BASH, pattern, prune=False)
        text = jsonc.set_member(text, _BASH, pattern, "ask")
    if any(opencode_bash(_get(text, _PERMISSION), _probe(p))[0] != "ask" for p in patterns):
        raise RuleError(
            'a later "permission" rule overrides "bash" (opencode\'s last match wins): '
            'move "bash" after it, then link again'
        )
    return text


def _drop_stale_bash(text: str, original: str | None) -> str:
    """Without the bash patterns an earlier link wrote for another pin of engram (this
    machine's path, before PATH was fixed), unless the `original` file had them."""
    bash = _get(text, _BASH)
    if not isinstance(bash, dict):
        return text
    before = _get(original, _BASH)
    kept = before if isinstance(before, dict) else {}
    for pattern, decision in bash.items():
        if decision == "ask" and pattern not in kept and shell_rules.stale_opencode_pattern(pattern):
            text = jsonc.remove_member(text, _BASH, pattern, prune=False)
    return text


def _covers_too(key: str, pattern: str) -> bool:
    """Whether a later bash key could match what `pattern` matches (then engram's goes last)."""
    probe = pattern.replace("*", "x")
    return fnmatch.fnmatchcase(probe, key.replace("[", "[[]")) or fnmatch.fnmatchcase(pattern, key)


def _remove_bash(text: str, original: str | None) -> str:
    bash = _get(text, _BASH)
    if not isinstance(bash, dict):
        return text
    before = _get(original, _BASH)
    if isinstance(before, str) and before == "allow" and set(bash) == {"*", *shell_rules.opencode_patterns()}:
        return jsonc.set_member(text, _PERMISSION, "bash", "allow")
    kept = before if isinstance(before, dict) else {}
    for pattern in shell_rules.opencode_patterns():
        if bash.get(pattern) == "ask" and kept.get(pattern) != "ask":
            remaining = _get(text, _BASH)
            last = isinstance(remaining, dict) and len(remaining) == 1
            text = jsonc.remove_member(text, _BASH, pattern, prune=False)
            if last and before is None:
                text = jsonc.remove_member(
                    text, _PERMISSION, "bash", prune=_get(original, _PERMISSION) is None
                )
    return text


# --- Claude Code's shell ---------------------------------------------------------------------------
def add_claude_ask(text: str | None, original: str | None = None) -> str:
    """`.claude/settings.json` with engram's `permissions.ask` rules (created when absent); the
    rules an earlier link wrote for another pin (shell_rules.stale_claude_rule) go, unless the
    `original` file had them."""
    rules = shell_rules.claude_rules()
    if text is None or not text.strip():
        return jsonc.new_document(("permissions",), "ask", rules)
    ask = _get(text, _ASK)
    if isinstance(ask, list):
        before = _get(original, _ASK)
        kept = before if isinstance(before, list) else []
        stale = [i for i, r in enumerate(ask) if isinstance(r, str) and shell_rules.stale_claude_rule(r)]
        for index in reversed([i for i in stale if ask[i] not in kept]):
            text = jsonc.remove_item(text, _ASK, index)
        ask = _get(text, _ASK)
    if ask is None:
        permissions = _get(text, ("permissions",))
        if permissions is not None and not isinstance(permissions, dict):
            raise RuleError('"permissions" is not an object; fix it by hand')
        return jsonc.set_member(text, ("permissions",), "ask", rules)
    if not isinstance(ask, list):
        raise RuleError('"permissions.ask" is not a list; fix it by hand')
    for rule in rules:
        if rule not in ask:
            text = jsonc.append_item(text, _ASK, rule)
    return text


def remove_claude_ask(text: str, original: str | None) -> str:
    ask = _get(text, _ASK)
    if not isinstance(ask, list):
        return text
    before = _get(original, _ASK)
    kept = before if isinstance(before, list) else []
    ours = [i for i, rule in enumerate(ask) if rule in shell_rules.claude_rules() and rule not in kept]
    if not ours:
        return text
    if before is None and len(ours) == len(ask):
        return jsonc.remove_member(
            text, ("permissions",), "ask", prune=_get(original, ("permissions",)) is None
        )
    for index in reversed(ours):
        text = jsonc.remove_item(text, _ASK, index)
    return text


def claude_ask_installed(text: str | None) -> bool:
    ask = _get(text, _ASK)
    return isinstance(ask, list) and all(rule in ask for rule in shell_rules.claude_rules())


def _remove_gemini(text: str, original: str | None) -> str:
    allowed = _get(text, _ALLOWED)
    if not isinstance(allowed, list):
        return text
    before = _get(original, _ALLOWED)
    kept = before if isinstance(before, list) else []
    ours = [i for i, name in enumerate(allowed) if name in GEMINI_ALLOWED and name not in kept]
    if not ours:
        return text
    if before is None and len(ours) == len(allowed):
        return jsonc.remove_member(text, ("tools",), "allowed", prune=_get(original, ("tools",)) is None)
    for index in reversed(ours):
        text = jsonc.remove_item(text, _ALLOWED, index)
    return text


# --- VS Code's agent terminal -------------------------------------------------------------------------
def add_vscode_ask(text: str | None, original: str | None = None) -> str:
    """settings.json with engram's never-auto-approve rule (created when absent)."""
    if text is None or not text.strip():
        return jsonc.new_document(_AUTO_APPROVE, VSCODE_RULE, False)
    rules = _get(text, _AUTO_APPROVE)
    if rules is not None and not isinstance(rules, dict):
        raise RuleError('"chat.tools.terminal.autoApprove" is not an object; fix it by hand')
    if isinstance(rules, dict) and rules.get(VSCODE_RULE) is False:
        return text
    return jsonc.set_member(text, _AUTO_APPROVE, VSCODE_RULE, False)


def remove_vscode_ask(text: str, original: str | None) -> str:
    if _get(text, (*_AUTO_APPROVE, VSCODE_RULE)) is not False:
        return text
    before = _get(original, (*_AUTO_APPROVE, VSCODE_RULE))
    if before is not None:
        return text if before is False else jsonc.set_member(text, _AUTO_APPROVE, VSCODE_RULE, before)
    return jsonc.remove_member(text, _AUTO_APPROVE, VSCODE_RULE, prune=_get(original, _AUTO_APPROVE) is None)


def vscode_rule_set(settings: Mapping[str, Any]) -> bool:
    """Whether a VS Code settings object holds engram's never-auto-approve rule."""
    rules = settings.get(_AUTO_APPROVE[0])
    return isinstance(rules, dict) and rules.get(VSCODE_RULE) is False
