"""opencode's session start: the plugin `engram link opencode` installs in the project.

opencode 1.18 has no hook in its config that runs a command; it loads every `.opencode/plugins/*.js`
of the project, and a plugin's `experimental.chat.system.transform` may add to the system prompt
of each model request of a session. engram's plugin runs `engram hook session-start` (argv, no
shell) once per session, at its first request, and adds what it printed: the text Claude Code's
hook gives its model, made safe by the same path. A file engram owns whole, marked like the
`/engram` command; a file of that name that is not engram's is left alone without `--force`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from engram_mcp.hosts.doctor.findings import Finding
from engram_mcp.hosts.edits import (
    Result,
    diff,
    drop_backup,
    keep_as_original,
    mark_created,
    original,
    prune_empty,
    read,
    read_quietly,
    real_path,
)
from engram_mcp.hosts.errors import HostError
from engram_mcp.hosts.link.launch import pinned
from engram_mcp.hosts.link.path_hint import fix, off_path
from engram_mcp.hosts.targets import display_path, home_of
from store.files.fsutil import write_atomic
from store.safety import untrusted

MARK: Final = "engram:session-start"
"""The mark that makes the plugin engram's (doctor, unlink)."""
LABEL: Final = "session-start plugin"
HOOK_MISSING: Final = "host.hook_missing"
HOOK_STALE: Final = "host.hook_stale"
NOT_PORTABLE: Final = "host.not_portable"

_TEMPLATE: Final = """\
// {mark}: installed by `engram link opencode`; `engram unlink opencode` removes it.
// At the first model request of each session, runs engram's session start in the project and
// adds what it printed (this project's memory, escaped by engram) to the session's system prompt.
import {{ execFile }} from "node:child_process"

const ENGRAM = {argv}

function sessionStart(directory) {{
  return new Promise((resolve) => {{
    const options = {{ cwd: directory, timeout: 30000, maxBuffer: 4 * 1024 * 1024 }}
    const child = execFile(ENGRAM[0], ENGRAM.slice(1), options, (error, stdout) =>
      resolve(error ? "" : String(stdout).trim()),
    )
    child.stdin?.end()
  }})
}}

export const EngramSessionStart = async ({{ directory }}) => {{
  const loaded = new Map()
  return {{
    "experimental.chat.system.transform": async (input, output) => {{
      if (!input?.sessionID || !Array.isArray(output?.system)) return
      if (!loaded.has(input.sessionID)) loaded.set(input.sessionID, sessionStart(directory))
      const text = await loaded.get(input.sessionID)
      if (text) output.system.push(text)
    }},
  }}
}}
"""


def render(program: str, args: list[str]) -> str:
    """The plugin's text; its argv is a JSON array (a JavaScript literal of exactly those strings)."""
    argv = json.dumps([program, *args, "hook", "session-start"], ensure_ascii=True)
    return _TEMPLATE.format(mark=MARK, argv=argv)


def plugin_path(workspace: Path) -> Path:
    return workspace / ".opencode" / "plugins" / "engram.js"


def _shown(workspace: Path, env: Mapping[str, str]) -> str:
    return display_path(plugin_path(workspace), workspace, home_of(env))


def _named(text: str) -> list[str] | None:
    """The argv a plugin of ours runs, or None when its text has none engram writes."""
    found = re.search(r"^const ENGRAM = (\[.*\])$", text, re.MULTILINE)
    try:
        argv = json.loads(found.group(1)) if found else None
    except ValueError:
        return None
    ok = isinstance(argv, list) and len(argv) > 2 and all(isinstance(a, str) for a in argv)
    return argv if ok else None


def link_plugin(
    workspace: Path, *, force: bool, dry_run: bool, env: Mapping[str, str] = os.environ
) -> Result:
    """Write the plugin (or bring a stale one of ours up to date); another file of that name is
    left alone unless `force`, which keeps it as the backup unlink restores."""
    path, shown = plugin_path(workspace), _shown(workspace, env)
    text = render(*pinned("engram"))
    try:
        before = read(path)
    except HostError as exc:
        return Result("opencode", shown, "error", exc.message, code=exc.code)
    if before == text:
        return Result("opencode", shown, "unchanged", LABEL)
    foreign = before is not None and MARK not in before
    if foreign and not force:
        message = f"{LABEL}: a file there is not engram's; left alone (use --force to replace it)"
        return Result("opencode", shown, "skipped", message)
    if not dry_run:
        mode = path.stat().st_mode & 0o7777 if before is not None else 0o644
        if before is None:
            mark_created(path)
        elif foreign:
            keep_as_original(path, before.encode("utf-8"))
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(real_path(path), text.encode("utf-8"), mode=mode)
    action = "added" if before is None else "updated"
    return Result("opencode", shown, action, LABEL, diff(shown, before, text))


def unlink_plugin(workspace: Path, *, dry_run: bool, env: Mapping[str, str] = os.environ) -> Result:
    """Remove engram's plugin (restoring a file `--force` replaced), then the folders it leaves
    empty, up to the workspace."""
    path, shown = plugin_path(workspace), _shown(workspace, env)
    try:
        before = read(path)
    except HostError as exc:
        return Result("opencode", shown, "error", exc.message, code=exc.code)
    if before is None:
        return Result("opencode", shown, "absent", LABEL)
    if MARK not in before:
        return Result("opencode", shown, "skipped", f"{LABEL}: the file there is not engram's; left alone")
    if path.is_symlink():
        return Result("opencode", shown, "skipped", f"{LABEL}: a symbolic link of yours; left alone")
    kept = original(path, in_workspace=True)
    restore = kept if kept is not None and MARK not in kept else None
    if not dry_run:
        if restore is not None:
            write_atomic(path, restore.encode("utf-8"), mode=path.stat().st_mode & 0o7777)
        else:
            path.unlink()
        drop_backup(path, in_workspace=True)
        if restore is None:
            prune_empty(path.parent, workspace)
    action = "restored" if restore is not None else "removed"
    return Result("opencode", shown, action, LABEL, diff(shown, before, restore))


def is_stale(workspace: Path) -> bool:
    """Whether the plugin is engram's and differs from what `link_plugin` writes here (upgrade)."""
    text = read_quietly(plugin_path(workspace))
    return text is not None and MARK in text and text != render(*pinned("engram"))


def findings(workspace: Path, env: Mapping[str, str] = os.environ) -> list[Finding]:
    """For a workspace opencode entry: `host.hook_missing` with no plugin there, `host.not_portable`
    for one of ours that runs engram by a path of this machine (the file is committed),
    `host.hook_stale` for one another engram version wrote. A file there that is not engram's is
    the user's own plugin, and not reported."""
    shown, relink = _shown(workspace, env), "run `engram link opencode`"
    try:
        text = read(plugin_path(workspace))
    except HostError:
        text = ""
    if text is None:
        return [Finding(HOOK_MISSING, shown, f"no engram {LABEL}", relink)]
    if MARK not in text or text == render("engram", []):
        return []
    argv = _named(text)
    if argv is not None and text == render(argv[0], argv[1:-2]) and argv[0] != "engram":
        off = off_path(env)
        relink = f"{relink} to write the bare name engram"
        return [
            Finding(
                NOT_PORTABLE,
                shown,
                f"the {LABEL} runs {untrusted.line(argv[0])!r}, a path on this machine only: a "
                "teammate's opencode cannot run it from the committed file",
                relink if off is None else f"{fix(off, env)}; then {relink}",
            )
        ]
    return [Finding(HOOK_STALE, shown, f"the {LABEL} is another engram version's, not this one's", relink)]
