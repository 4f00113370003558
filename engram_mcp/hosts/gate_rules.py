"""The per-tool approval rules `engram link` writes beside engram's entry (SPEC §8, gate.py).

* opencode: `"permission": {"engram_engram_commit": "ask"}` — its default agent otherwise runs
  every tool unasked (`opencode run` committed). The read tools need nothing: opencode allows
  them by default.
* Gemini CLI: the read tools' full names in `tools.allowed`, so `gemini -p` offers them to the
  model (headless Gemini denies, and hides, every tool whose policy is "ask"). Workspace policy
  files (`.gemini/policies/`) are switched off in Gemini CLI, and `trust`, `mcp.allowed` or
  `mcp.autoAllowInHeadless` would cover the commit tool too, so `tools.allowed` is the one
  setting that allows exactly the read tools, in both scopes. Gemini does not merge the user's
  and the project's `tools.allowed` (the project list replaces the user list), which link says
  when the user list is not empty.
* Codex gets its per-tool modes inside the managed block (codex_toml.py).

Every edit is a format-preserving JSONC splice; `remove` is the inverse of `add`, given the
file's original text (its `.bak`), so link → unlink restores the original bytes and keeps what
the user had written before link.
"""

from __future__ import annotations

from engram_mcp.hosts import jsonc
from engram_mcp.hosts.gate import GEMINI_ALLOWED, OPENCODE_RULE, opencode_decision

_PERMISSION = ("permission",)
_ALLOWED = ("tools", "allowed")


class RuleError(ValueError):
    """The file's shape leaves no room for engram's rule; `fix` says what the user should change."""


def add(target: str, text: str) -> str:
    """`text` with engram's rules for `target` added (unchanged when they are there already)."""
    if target == "opencode":
        return _add_opencode(text)
    if target == "gemini":
        return _add_gemini(text)
    return text


def remove(target: str, text: str, original: str | None) -> str:
    """`text` without the rules `add` put there; rules present in `original` stay."""
    if target == "opencode":
        return _remove_opencode(text, original)
    if target == "gemini":
        return _remove_gemini(text, original)
    return text


def _get(text: str | None, path: tuple[str, ...]) -> object:
    try:
        return jsonc.get(text, path) if text and text.strip() else None
    except jsonc.JsoncError:
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
def _add_gemini(text: str) -> str:
    allowed = _get(text, _ALLOWED)
    if allowed is None:
        tools = _get(text, ("tools",))
        if tools is not None and not isinstance(tools, dict):
            raise RuleError('"tools" is not an object; fix it by hand')
        return jsonc.set_member(text, ("tools",), "allowed", list(GEMINI_ALLOWED))
    if not isinstance(allowed, list):
        raise RuleError('"tools.allowed" is not a list; fix it by hand')
    for name in GEMINI_ALLOWED:
        if name not in allowed:
            text = jsonc.append_item(text, _ALLOWED, name)
    return text


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


def replaced_user_list(target: str, scope: str, user_settings: str | None) -> bool:
    """Whether a workspace `tools.allowed` now hides a non-empty user-level list (Gemini CLI)."""
    if target != "gemini" or scope != "workspace":
        return False
    user_list = _get(user_settings, _ALLOWED)
    return isinstance(user_list, list) and bool(user_list)
