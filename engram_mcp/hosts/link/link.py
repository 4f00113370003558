"""`engram link` / `unlink` / `upgrade`: add, re-pin or remove engram's entry in host configs.

Only engram's entry (Codex: its managed block; Claude: its SessionStart handler) changes;
the `/engram` command (slash_commands.py) and, in a project, the session start (Claude Code,
Codex and Gemini CLI: a SessionStart hook, session_hooks.py; opencode: a plugin,
hook_plugin.py) are installed beside it and removed with it;
every other byte stays. Writes are atomic, keep the file mode, and keep one backup of the
original on the first change, under `$ENGRAM_HOME/backups/` (edits.py). A file that does not
parse is left untouched. An `engram` entry that is not ours (another tool uses the same name) is
reported and left alone without --force.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from engram_mcp.hosts.edits import Result as Result
from engram_mcp.hosts.edits import finish, link_outside, planted_backup, read
from engram_mcp.hosts.errors import HostError, JsoncError, LinkRefused, RuleError, TomlError
from engram_mcp.hosts.formats import codex_toml, jsonc
from engram_mcp.hosts.gate import gate_rules
from engram_mcp.hosts.link import hook_plugin, rule_files, session_hooks
from engram_mcp.hosts.link.launch import is_ours, pinned, unsafe_env
from engram_mcp.hosts.link.path_hint import fix, off_path
from engram_mcp.hosts.link.rule_files import RuleFile
from engram_mcp.hosts.link.settings_files import (
    add_rules,
    hook_installed,
    link_claude_ask,
    link_hook,
    original_exists,
    original_text,
    quote,
    remove_rules,
    unlink_claude_ask,
    unlink_hook,
    vscode_settings,
)
from engram_mcp.hosts.link.slash_commands import CommandFile, command_files, link_command, unlink_command
from engram_mcp.hosts.link.steps import RESTART, step_for
from engram_mcp.hosts.targets import HostFile, Skip, claude_settings, display_path, home_of, resolve
from store.files.workspace import is_git_root
from store.safety import untrusted

NAME: Final = "engram"

NOT_ON_PATH: Final = "ENGRAM_NOT_ON_PATH"
NOT_PORTABLE: Final = "ENGRAM_NOT_PORTABLE"
OUTSIDE_GIT: Final = "ENGRAM_OUTSIDE_GIT"
GLOBAL_ONLY: Final = "ENGRAM_GLOBAL_ONLY"
PARSE: Final = "ENGRAM_HOST_PARSE"
PLANTED_BACKUP: Final = (
    "not restored, and left alone: engram keeps its backups in $ENGRAM_HOME/backups, and a .bak "
    "in the project may be anyone's (a clone can plant one); delete it if you do not need it"
)

Warn = Callable[[str, str], None]
"""Where `link` says what the user must know before it writes: (code, message)."""


def _unwarned(code: str, message: str) -> None:
    return None


# --- before anything is written ----------------------------------------------------------------
def global_only(skip: Skip, command: str) -> LinkRefused:
    """ENGRAM_GLOBAL_ONLY: the target has no project config (Windsurf, Antigravity, Claude Desktop)."""
    return LinkRefused(
        GLOBAL_ONLY,
        f"{skip.message}, so this project has no file of it to {command}; nothing was written. "
        f"Run `engram {command} {skip.target} --global` (your user-level config)",
    )


def portable(
    command: str,
    *,
    machine_local: bool,
    warn: Warn,
    env: Mapping[str, str] = os.environ,
    left: str = "nothing was written",
) -> None:
    """Check that the project files `command` (`link claude`, `upgrade`) writes can name the bare
    `engram-mcp` and `engram`: PATH here finds this installation's. Else refuse, or with
    `machine_local` warn that the absolute path written works on this machine only. `left`
    says what the refusal leaves as it was.

    Raises:
        LinkRefused: ENGRAM_NOT_ON_PATH, naming the profile file for the user's shell."""
    off = off_path(env)
    if off is None:
        return
    if not machine_local:
        raise LinkRefused(
            NOT_ON_PATH,
            f"{off.problem()}. The files `engram {command}` writes for this project are committed "
            "and shared, so they must name the bare engram-mcp, which a teammate's PATH finds; "
            f"{left}. Fix: {fix(off, env)}, and run `engram {command}` again. Or "
            f"`engram {command} --machine-local` writes this machine's path anyway: those files "
            "then work only here; do not commit them",
        )
    program, args = pinned("engram-mcp")
    warn(
        NOT_PORTABLE,
        f"the project files below name {' '.join([program, *args])}, which exists on this machine "
        "only: a teammate's host cannot start it, so do not commit them. To write the bare name "
        f"instead: {fix(off, env)}, and run `engram {command}` again",
    )


def in_git(folder: Path) -> bool:
    """Whether `folder` is inside a git repository (a `.git` in it or in a folder above)."""
    here = folder.resolve()
    return any(is_git_root(f) for f in (here, *here.parents))


def outside_git(workspace: Path, target: str) -> str:
    return (
        f"{untrusted.line(str(workspace))} is not in a git repository, so the files `engram link "
        f"{target}` writes here cannot be shared with your team through git until it is one "
        "(run `git init` there); linking anyway"
    )


# --- reading one file ---------------------------------------------------------------------
def current_entry(host: HostFile, text: str | None) -> dict[str, Any] | None:
    """The parsed engram entry, or None; HostError when the file does not parse."""
    if text is None or not text.strip():
        return None
    try:
        if host.format == "toml":
            return codex_toml.entry(text)
        found = jsonc.get(text, (*host.container, NAME))
    except RecursionError:
        raise HostError(PARSE, "nested too deeply to read; left untouched") from None
    except (JsoncError, TomlError) as exc:
        line = getattr(exc, "line", None)
        where = f"line {line}: " if line else ""
        raise HostError(PARSE, f"{where}{getattr(exc, 'message', exc)}; left untouched") from None
    return found if isinstance(found, dict) else ({"value": found} if found is not None else None)


def entry_is_ours(host: HostFile, entry: Mapping[str, Any], workspace: Path | None = None) -> bool:
    """Whether `entry` runs this package's server (launch.is_ours; `workspace`: the project, whose
    files a clone may have planted, is never where ours runs from)."""
    command = entry.get("command")
    if host.target == "opencode" and isinstance(command, list) and command:
        return is_ours(command[0], command[1:], workspace)
    args = entry.get("args")
    return is_ours(command, args if isinstance(args, list) else [], workspace)


ENV_KEYS: Final = ("env", "environment")
"""Where an entry keeps the variables its server starts with (opencode: `environment`)."""

UNSAFE_ENV: Final = "host.env_unsafe"


def entry_unsafe_env(entry: Mapping[str, Any], scope: str) -> list[str]:
    """The variables of `entry`'s env that change what its server runs or trusts, for an entry
    of a file at `scope` (launch.unsafe_env: a workspace file is committed, a clone's)."""
    return [name for key in ENV_KEYS for name in unsafe_env(entry.get(key), scope)]


UNSAFE_KEYS: Final = frozenset({"envfile", "env_file", "cwd"})
"""Keys of an entry (compared lower-cased) that change what its server starts with: an env file
(VS Code's `envFile`: `${workspaceFolder}/.env.engram` can set PYTHONPATH or HOME) or the folder
it starts in. engram's entry has neither; link drops them."""


def entry_unsafe_keys(entry: Mapping[str, Any]) -> list[str]:
    """The keys of `entry` in UNSAFE_KEYS, as the file spells them."""
    return [str(key) for key in entry if str(key).lower() in UNSAFE_KEYS]


def _had_container(host: HostFile, original: str | None) -> bool:
    """Whether the original file already had engram's container, which unlink keeps."""
    try:
        return (
            original is not None
            and original.strip() != ""
            and jsonc.get(original, host.container) is not None
        )
    except JsoncError:
        return False


# --- the entry ---------------------------------------------------------------------------------
def desired_entry(host: HostFile, existing: Mapping[str, Any] | None, args: list[str]) -> dict[str, Any]:
    command, base_args = pinned("engram-mcp")
    fresh = host.entry(command, [*base_args, *args])
    if existing is None:
        return fresh
    kept = {**existing, **fresh}  # keep keys the user added (env, timeout…), re-pin the rest
    if host.target == "gemini" and kept.get("trust") is True:
        del kept["trust"]  # Gemini's trust skips every confirmation, engram_commit's included
    for key in entry_unsafe_keys(kept):  # nor an env file or a folder to start in
        del kept[key]
    for key in ENV_KEYS:  # never a variable that changes what runs (PYTHONPATH=. defeats -P)
        if unsafe := unsafe_env(kept.get(key), host.scope):
            kept[key] = {k: v for k, v in kept[key].items() if k not in unsafe}
    return kept


def _dropped(names: list[str], keys: list[str]) -> str:
    said = []
    if keys:
        said.append(f"dropped {', '.join(untrusted.line(k, 80) for k in keys)} from the entry")
    if names:
        said.append(f"dropped {', '.join(untrusted.line(n, 80) for n in names)} from its env")
    return "; ".join(said) + ", which can change what the server runs or trusts" if said else ""


def link_file(
    host: HostFile,
    *,
    args: list[str],
    force: bool,
    dry_run: bool,
    workspace: Path | None = None,
    session_hook: bool = False,
) -> Result:
    """Write (or re-pin) engram's entry in `host`, with the host's gate rules in the same write;
    a Gemini project file also gets engram's SessionStart hook there, re-pinned when present and
    added with `session_hook` (session_hooks.py)."""
    try:
        before = read(host.path)
        existing = current_entry(host, before)
    except HostError as exc:
        return Result(host.target, host.shown, "error", exc.message, code=exc.code)
    ours = existing is not None and entry_is_ours(host, existing, workspace)
    dropped = entry_unsafe_env(existing, host.scope) if existing is not None and ours else []
    keys = entry_unsafe_keys(existing) if existing is not None and ours else []
    message = _dropped(dropped, keys)
    if existing is not None and not ours and not force:
        return Result(
            host.target,
            host.shown,
            "foreign",
            f"an `engram` entry runs {existing.get('command')!r}, not engram-mcp; left alone (use --force to replace it)",
        )
    if host.format == "toml":
        command, base_args = pinned("engram-mcp")
        text = before or ""
        try:
            if existing is not None and codex_toml.has_block(text):
                if stray := codex_toml.stray_tables(text):
                    tables = ", ".join(untrusted.line(t, 80) for t in stray)
                    removed = f"removed {tables}, outside engram's managed block"
                    message = f"{message}; {removed}" if message else removed
                after = codex_toml.replace(text, command, [*base_args, *args])
            elif existing is not None:  # unmarked or foreign (--force): rewrite it as our block
                after = codex_toml.add(codex_toml.remove_foreign(text), command, [*base_args, *args])
            else:
                after = codex_toml.add(text, command, [*base_args, *args])
        except TomlError as exc:
            return Result(host.target, host.shown, "error", f"{exc}; left untouched", code=PARSE)
        action = "added" if existing is None else "updated"
        return finish(host, before, after, action, dry_run, message)
    entry = desired_entry(host, existing if ours else None, args)
    try:
        if before is None or not before.strip():
            after = jsonc.new_document(host.container, NAME, entry)
        else:
            after = jsonc.set_member(before, host.container, NAME, entry)
        after = gate_rules.add(host.target, after, original_text(host))
        if host.target == "gemini" and host.scope == "workspace":
            after = session_hooks.gemini_linked(after, add=session_hook)  # one write: one backup
            if session_hooks.commands_in("gemini", after):
                message = ", ".join(m for m in (message, session_hooks.LABEL) if m)
    except JsoncError as exc:
        where = f"line {exc.line}: {exc.message}; left untouched"
        return Result(host.target, host.shown, "error", where, code=PARSE)
    except RuleError as exc:
        return Result(host.target, host.shown, "error", f"{exc}; left untouched")
    return finish(host, before, after, "added" if existing is None else "updated", dry_run, message)


def unlink_file(host: HostFile, *, force: bool, dry_run: bool, workspace: Path | None = None) -> Result:
    try:
        before = read(host.path)
        existing = current_entry(host, before)
    except HostError as exc:
        return Result(host.target, host.shown, "error", exc.message, code=exc.code)
    if existing is None or before is None:
        return Result(host.target, host.shown, "absent")
    if not entry_is_ours(host, existing, workspace) and not force:
        return Result(
            host.target,
            host.shown,
            "foreign",
            f"the `engram` entry runs {existing.get('command')!r}; left alone",
        )
    if host.format == "toml":
        if not codex_toml.has_block(before):
            return Result(
                host.target,
                host.shown,
                "foreign",
                "the [mcp_servers.engram] table is not engram's managed block",
            )
        after: str | None = codex_toml.remove(before)
    else:
        original = original_text(host)
        after = gate_rules.remove(host.target, before, original)
        if host.target == "gemini":
            after = session_hooks.gemini_unlinked(after, original)
        after = jsonc.remove_member(after, host.container, NAME, prune=not _had_container(host, original))
    created_by_us = not original_exists(host) and not host.path.is_symlink()
    if after is not None and created_by_us and after.strip() in ("", "{}"):
        after = None  # link created this file; unlink takes it away again
    return finish(host, before, after, "removed", dry_run)


def _gemini_still_linked(workspace: Path, global_: bool, env: Mapping[str, str]) -> bool:
    """Whether the other Gemini scope still runs engram (the policy file serves both)."""
    other = resolve("gemini", not global_, workspace, env)
    if not isinstance(other, HostFile):
        return False
    try:
        entry = current_entry(other, read(other.path))
    except HostError:
        return False
    return entry is not None and entry_is_ours(other, entry, workspace)


def _read_quietly(path: Path) -> str | None:
    try:
        return read(path)
    except HostError:
        return None


# --- commands ----------------------------------------------------------------------------------
def claude_global_command(always_load: bool) -> str:
    command, args = pinned("engram-mcp")
    extra = [*args, "--always-load"] if always_load else args
    return " ".join(["claude mcp add --scope user", NAME, "--", quote(command), *extra])


def link(
    target: str,
    workspace: Path,
    *,
    global_: bool = False,
    force: bool = False,
    dry_run: bool = False,
    no_hook: bool = False,
    machine_local: bool = False,
    warn: Warn = _unwarned,
    env: Mapping[str, str] = os.environ,
) -> list[Result]:
    """Link `target` at one scope. A workspace link names the bare `engram-mcp` and `engram`
    (its files are committed: `portable`), and is said to be outside git before it writes.

    Raises:
        LinkRefused: ENGRAM_NOT_ON_PATH, ENGRAM_GLOBAL_ONLY; nothing was written."""
    resolved = resolve(target, global_, workspace, env)
    files = command_files(target, global_, workspace, env)
    rules = rule_files.rule_file(target, global_, workspace, env)
    if isinstance(resolved, Skip):
        if resolved.message == "claude-global":
            user_hook = hook_installed(Path(env.get("HOME") or Path.home()) / ".claude" / "settings.json")
            printed = Result(
                target, "~/.claude.json", "printed", claude_global_command(no_hook and not user_hook)
            )
            commands = [link_command(f, force=force, dry_run=dry_run) for f in files]
            return [printed, *commands, link_claude_ask(workspace, True, dry_run, env)]
        raise global_only(resolved, "link")
    if resolved.scope == "workspace":
        portable(f"link {target}", machine_local=machine_local, warn=warn, env=env)
        if not in_git(workspace):
            warn(OUTSIDE_GIT, outside_git(workspace, target))
        if refused := escapes(target, _touched(target, resolved, files, rules, workspace), workspace, env):
            return refused
    results = []
    args: list[str] = []
    if target == "claude":
        installing_hook = not no_hook
        if not installing_hook and not hook_installed(claude_settings(workspace)):
            args = ["--always-load"]
    here = resolved.scope == "workspace"
    results.append(
        link_file(resolved, args=args, force=force, dry_run=dry_run, workspace=workspace, session_hook=here)
    )
    if results[0].failed:
        return results
    results.extend(link_command(f, force=force, dry_run=dry_run) for f in files)
    if rules is not None:
        results.append(rule_files.link_rules(rules, dry_run=dry_run))
    if target == "claude" and no_hook:
        results.append(link_claude_ask(workspace, False, dry_run, env))
    if target == "vscode":
        settings = vscode_settings(workspace, global_, env)
        results.append(add_rules(settings, gate_rules.add_vscode_ask, dry_run, "agent terminal ask rule"))
    if resolved.scope == "workspace" and (step := step_for(target, workspace, env)) is not None:
        results[0].step = f"{step.message}: {step.fix}"
    elif (restart := RESTART.get(target)) is not None:
        results[0].step = restart
    if target == "claude" and not no_hook:
        results.append(link_hook(workspace, dry_run))
    if target == "codex" and here:
        results.append(hooked := session_hooks.link_codex(workspace, dry_run))
        if hooked.action in ("added", "updated"):  # Codex runs a changed hook once trusted again
            results[0].step = "; then ".join(s for s in (results[0].step, session_hooks.CODEX_REVIEW) if s)
    if target == "opencode" and here:
        results.append(hook_plugin.link_plugin(workspace, force=force, dry_run=dry_run, env=env))
    return results


def unlink(
    target: str,
    workspace: Path,
    *,
    global_: bool = False,
    force: bool = False,
    dry_run: bool = False,
    env: Mapping[str, str] = os.environ,
) -> list[Result]:
    """Remove what `link` added at one scope; each file's line says `restored` (its original
    bytes are back) or `removed`.

    Raises:
        LinkRefused: ENGRAM_GLOBAL_ONLY; nothing was written."""
    resolved = resolve(target, global_, workspace, env)
    files = command_files(target, global_, workspace, env)
    if isinstance(resolved, Skip):
        if resolved.message == "claude-global":
            printed = Result(target, "~/.claude.json", "printed", "claude mcp remove --scope user engram")
            commands = [unlink_command(f, dry_run=dry_run) for f in files]
            return [printed, *commands, unlink_claude_ask(workspace, True, dry_run, env)]
        raise global_only(resolved, "unlink")
    rules = rule_files.rule_file(target, global_, workspace, env)
    touched = _touched(target, resolved, files, rules, workspace)
    if resolved.scope == "workspace" and (refused := escapes(target, touched, workspace, env)):
        return refused
    results = [unlink_file(resolved, force=force, dry_run=dry_run, workspace=workspace)]
    if results[0].failed:
        return results
    # the command before the hook: the hook's removal takes away a .claude/ left empty
    results.extend(unlink_command(f, dry_run=dry_run) for f in files)
    if rules is not None and not (target == "gemini" and _gemini_still_linked(workspace, global_, env)):
        results.append(rule_files.unlink_rules(rules, dry_run=dry_run))
    if target == "claude":
        results.append(unlink_hook(workspace, dry_run))
    if target == "codex" and resolved.scope == "workspace":
        results.append(session_hooks.unlink_codex(workspace, dry_run))
    if target == "opencode" and resolved.scope == "workspace":
        results.append(hook_plugin.unlink_plugin(workspace, dry_run=dry_run, env=env))
    if target == "vscode":
        settings = vscode_settings(workspace, global_, env)
        results.append(
            remove_rules(settings, gate_rules.remove_vscode_ask, dry_run, "agent terminal ask rule")
        )
    if resolved.scope == "workspace":
        results += _planted(target, touched, workspace, env)
    return results


def _touched(
    target: str, host: HostFile, files: list[CommandFile], rules: RuleFile | None, workspace: Path
) -> list[Path]:
    """Every file `link` or `unlink` of `target` may write or remove at `host`'s scope."""
    paths = [host.path, *(f.path for f in files), *([rules.path] if rules is not None else [])]
    if target == "vscode" and host.scope == "workspace":
        paths.append(host.path.parent / "settings.json")
    if target == "codex" and host.scope == "workspace":
        paths.append(session_hooks.codex_hooks(workspace).path)
    if target == "opencode" and host.scope == "workspace":
        paths.append(hook_plugin.plugin_path(workspace))
    return paths + ([claude_settings(workspace)] if target == "claude" and host.scope == "workspace" else [])


def escapes(target: str, paths: list[Path], workspace: Path, env: Mapping[str, str]) -> list[Result]:
    """A refusal for each path in the workspace that leads outside it through a symbolic link
    (edits.link_outside), or nothing: then every one may be written."""
    found = []
    for path in dict.fromkeys(paths):
        if path.is_relative_to(workspace) and (problem := link_outside(path, workspace)) is not None:
            found.append(Result(target, display_path(path, workspace, home_of(env)), "error", problem))
    return found


def _planted(target: str, paths: list[Path], workspace: Path, env: Mapping[str, str]) -> list[Result]:
    """A line for each `X.bak` beside a workspace file unlink touched (edits.planted_backup)."""
    found = [b for b in dict.fromkeys(planted_backup(p, workspace) for p in paths) if b is not None]
    return [
        Result(target, display_path(b, workspace, home_of(env)), "skipped", PLANTED_BACKUP) for b in found
    ]
