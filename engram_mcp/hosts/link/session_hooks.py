"""The session start `engram link` installs for Gemini CLI and Codex, beside their entries.

Both run a command at each session start and give the model the `additionalContext` of the JSON
it prints: Gemini CLI 0.61 from `hooks.SessionStart` in the `.gemini/settings.json` that holds
engram's entry (edited in the same write as the entry: link.py), Codex 0.171 from `SessionStart`
in `.codex/hooks.json` (its own file, next to `.codex/config.toml`). engram's group runs
`engram hook session-start --host <target>`; every other group, event and key keeps its bytes.
Workspace scope only, as Claude Code's hook (settings_files.py): a user-level hook would load
every project's session, engram's or not. opencode's session start is a plugin (hook_plugin.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final

from engram_mcp.hosts.doctor.findings import Finding
from engram_mcp.hosts.edits import Result, finish, read, read_quietly
from engram_mcp.hosts.errors import HostError, JsoncError
from engram_mcp.hosts.formats import jsonc
from engram_mcp.hosts.link.path_hint import fix, off_path
from engram_mcp.hosts.link.settings_files import (
    HOOK_MATCHER,
    HOOK_SUFFIX,
    hook_command,
    original_exists,
    original_text,
)
from engram_mcp.hosts.targets import HostFile, display_path
from store.safety import untrusted

EVENT: Final = ("hooks", "SessionStart")
"""Where both hosts keep their SessionStart groups (an array of `{matcher?, hooks: [...]}`)."""
LABEL: Final = "SessionStart hook"
PARSE: Final = "ENGRAM_HOST_PARSE"
HOOK_MISSING: Final = "host.hook_missing"
NOT_PORTABLE: Final = "host.not_portable"

CODEX_REVIEW: Final = (
    'at its next start here Codex lists engram\'s new SessionStart hook under "Hooks need review": '
    "trust it there (or later in /hooks), or it does not run"
)
"""Codex runs a hook it does not manage only once the user has trusted its current definition;
no file engram can read says that was done, so `link` says it (on the entry's `next:` line)
whenever the hook changed."""


def command(target: str) -> str:
    return f"{hook_command()} --host {target}"


def _our_handler(target: str, handler: Any) -> bool:
    line = handler.get("command") if isinstance(handler, dict) else None
    return isinstance(line, str) and line.endswith(f"{HOOK_SUFFIX} --host {target}") and "engram" in line


def _ours(target: str, group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(_our_handler(target, h) for h in hooks)


def group(target: str) -> dict[str, Any]:
    if target == "gemini":
        # Gemini compares a SessionStart matcher with the source as a whole string, so no
        # matcher: every start (startup, resume, clear); its timeout is in milliseconds
        handler: dict[str, Any] = {"name": "engram-session-start", "type": "command"}
        return {"hooks": [{**handler, "command": command(target), "timeout": 30_000}]}
    handler = {"type": "command", "command": command(target), "timeout": 30}
    return {"matcher": HOOK_MATCHER, "hooks": [handler]}


def _has(text: str | None, path: Sequence[str]) -> bool:
    try:
        return text is not None and text.strip() != "" and jsonc.get(text, path) is not None
    except (JsoncError, RecursionError):
        return False


def put(text: str | None, fresh: dict[str, Any], ours: Callable[[Any], bool]) -> str:
    """`text` with engram's one group `fresh` in its SessionStart array: unchanged when it is there
    already, a stale group of ours replaced; the others keep their bytes.

    Raises:
        JsoncError: the file does not parse, or `hooks` is not an object or its SessionStart
            not an array (nothing of the user's is replaced)."""
    if text is None or not text.strip():
        return jsonc.new_document(EVENT[:-1], EVENT[-1], [fresh])
    found = jsonc.get(text, EVENT)
    if found is None:
        return jsonc.set_member(text, EVENT[:-1], EVENT[-1], [fresh])
    mine = [i for i, g in enumerate(found) if ours(g)] if isinstance(found, list) else []
    if isinstance(found, list) and [found[i] for i in mine] == [fresh]:
        return text
    for index in reversed(mine):
        text = jsonc.remove_item(text, EVENT, index)
    return jsonc.append_item(text, EVENT, fresh)  # raises when SessionStart is not an array


def take_out(text: str, ours: Callable[[Any], bool], original: str | None) -> str:
    """`text` without engram's groups; containers `put` created go with them, those the original
    file had stay."""
    found = jsonc.get(text, EVENT) if text.strip() else None
    mine = [i for i, g in enumerate(found) if ours(g)] if isinstance(found, list) else []
    if not mine or not isinstance(found, list):
        return text
    if len(mine) == len(found) and not _has(original, EVENT):
        return jsonc.remove_member(text, EVENT[:-1], EVENT[-1], prune=not _has(original, EVENT[:-1]))
    for index in reversed(mine):
        text = jsonc.remove_item(text, EVENT, index)
    return text


def commands_in(target: str, text: str | None) -> list[str]:
    """The commands of engram's SessionStart handlers in a host file's text (none if it does not parse)."""
    try:
        groups = jsonc.get(text, EVENT) if text and text.strip() else None
    except (JsoncError, RecursionError):
        return []
    return [
        h["command"]
        for g in (groups if isinstance(groups, list) else [])
        if _ours(target, g)
        for h in g["hooks"]
        if _our_handler(target, h)
    ]


# --- Gemini CLI: in the settings file of the entry (link.link_file, unlink_file) ----------------
def gemini_linked(text: str, *, add: bool) -> str:
    """Gemini settings text with engram's group re-pinned, or added with `add`.

    Raises:
        JsoncError: as `put`."""
    ours = partial(_ours, "gemini")
    if not add and not commands_in("gemini", text):
        return text
    return put(text, group("gemini"), ours)


def gemini_unlinked(text: str, original: str | None) -> str:
    return take_out(text, partial(_ours, "gemini"), original)


# --- Codex: .codex/hooks.json ------------------------------------------------------------------
def codex_hooks(workspace: Path) -> HostFile:
    path = workspace / ".codex" / "hooks.json"
    return HostFile("codex", "workspace", path, "json", ("hooks",), display_path(path, workspace, workspace))


def _refused(host: HostFile, exc: Exception) -> Result:
    if isinstance(exc, HostError):
        return Result(host.target, host.shown, "error", exc.message, code=exc.code)
    if isinstance(exc, JsoncError):
        return Result(
            host.target, host.shown, "error", f"line {exc.line}: {exc.message}; left untouched", code=PARSE
        )
    return Result(host.target, host.shown, "error", "nested too deeply to read; left untouched", code=PARSE)


def link_codex(workspace: Path, dry_run: bool) -> Result:
    """Add (or re-pin) engram's group in `.codex/hooks.json`; a file that does not parse, or
    whose `hooks` has no room for it, is left untouched (ENGRAM_HOST_PARSE)."""
    host = codex_hooks(workspace)
    try:
        before = read(host.path)
        had = bool(commands_in("codex", before))
        after = put(before, group("codex"), partial(_ours, "codex"))
    except (HostError, JsoncError, RecursionError) as exc:
        return _refused(host, exc)
    return finish(host, before, after, "updated" if had else "added", dry_run, LABEL)


def unlink_codex(workspace: Path, dry_run: bool) -> Result:
    host = codex_hooks(workspace)
    try:
        before = read(host.path)
        if before is None:
            return Result(host.target, host.shown, "absent", LABEL)
        after: str | None = take_out(before, partial(_ours, "codex"), original_text(host))
    except (HostError, JsoncError, RecursionError) as exc:
        return _refused(host, exc)
    if after is not None and after.strip() in ("", "{}") and not original_exists(host):
        after = None if not host.path.is_symlink() else after  # the file link created
    return finish(host, before, after, "removed", dry_run, LABEL)


def codex_installed(workspace: Path) -> bool:
    return bool(commands_in("codex", read_quietly(codex_hooks(workspace).path)))


# --- doctor --------------------------------------------------------------------------------------
def findings(target: str, workspace: Path, env: Mapping[str, str] = os.environ) -> list[Finding]:
    """For a workspace entry of `target` (gemini, codex): `host.hook_missing` when engram's
    SessionStart group is not in the host's file, `host.not_portable` when it runs engram by a path
    of this machine (the file is committed)."""
    path = workspace / ".gemini" / "settings.json" if target == "gemini" else codex_hooks(workspace).path
    shown = display_path(path, workspace, workspace)
    found = commands_in(target, read_quietly(path))
    relink = f"run `engram link {target}`"
    if not found:
        return [Finding(HOOK_MISSING, shown, f"no engram {LABEL}", relink)]
    for line in found:
        program = line.removesuffix(f"{HOOK_SUFFIX} --host {target}").strip().strip('"')
        if program != "engram":
            off = off_path(env)
            relink = f"{relink} to write the bare name engram"
            return [
                Finding(
                    NOT_PORTABLE,
                    shown,
                    f"the {LABEL} runs {untrusted.line(program)!r}, a path on this machine only: a "
                    "teammate's host cannot run it from the committed file",
                    relink if off is None else f"{fix(off, env)}; then {relink}",
                )
            ]
    return []
