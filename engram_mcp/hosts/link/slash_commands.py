"""The `/engram` command `engram link` installs beside the MCP entry (SPEC §7, §8).

The rest, and why: docs/design.md, `engram_mcp/hosts/link/slash_commands.py`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
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
    real_path,
)
from engram_mcp.hosts.errors import HostError
from engram_mcp.hosts.link.launch import pinned
from engram_mcp.hosts.link.path_hint import fix as path_fix
from engram_mcp.hosts.link.path_hint import off_path
from engram_mcp.hosts.targets import display_path, home_of
from engram_mcp.platform import vscode_user_dir
from store.files.fsutil import write_atomic
from store.safety import untrusted

MARK: Final = "engram:command"
"""The mark that makes a command file engram's (doctor, unlink)."""

_NOTICE: Final = f"{MARK} installed by `engram link {{target}}`; `engram unlink {{target}}` removes it"


@dataclass(frozen=True, slots=True)
class CommandFile:
    """One file of the `/engram` command for one host and scope."""

    target: str
    scope: str
    path: Path
    shown: str
    text: str
    """What `engram link` writes."""
    base: Path
    """The folder this scope starts at (workspace or home): never removed."""


def _quote(word: str) -> str:
    return f'"{word}"' if " " in word else word


def engram_command() -> str:
    """How the command text names the `engram` CLI (pinned like the MCP entry)."""
    command, args = pinned("engram")
    return " ".join([_quote(command), *args])


SESSION_HOSTS: Final = frozenset(("claude", "codex", "gemini", "opencode"))
"""Targets whose sessions engram reads itself (engram_mcp.intake.transcripts.HOSTS, by the same names):
their `/engram ss -f` asks the tool for this host's sessions only, never another host's."""


def _force_steps(target: str | None) -> str:
    if target in SESSION_HOSTS:
        this = f'`query_level` 1 and `host` "{target}" (this session of this host)'
        last = f'with `query_level` N and `host` "{target}"'
    else:
        this = (
            "`text` set to the messages the human typed in this session, quoted exactly as they "
            "typed them, and nothing you wrote (engram cannot read this host's sessions itself)"
        )
        last = (
            "except that engram cannot read this host's earlier sessions: tell the human so, and "
            "that `engram save-session --text FILE` in their own terminal saves a session they saved to a file"
        )
    return f"""1. `save-session --force` or `ss -f` (any mix of `save-session`/`ss` and `--force`/`-f`) with
   nothing after it: call the `engram_save_session` tool with {this}.
   If engram asks the human in a dialog, their answer there is the approval: report what it
   says. Otherwise show the human the numbered preview, then call `engram_commit` with its
   `approval_token` and `approve` set to the numbers of the candidates whose verdict is ADD
   (the force rule: UPDATE and NOOP candidates stay for the human to review). This host asks
   the human before `engram_commit` runs; that yes is their approval.

2. The same followed by `last N sessions` (for example `ss -f last 50 sessions`): the same,
   {last}.

"""


def instructions(engram: str, request: str, target: str | None = None) -> str:
    """The body every host gets: how to handle each `/engram` request (`target`: the host the
    file is for, so `ss -f` reads that host's sessions only)."""
    return f"""# /engram: this project's memory

{request}

The human typed this request themselves. Handle it exactly as follows, and do nothing else.

{_force_steps(target)}3. `search QUERY`: call the `engram_search` tool with that query. `load [TASK]`: call
   `engram_load`, with the task as `query` when there is one. `status`: call `engram_status`.

4. Anything else that would save something (`save-session` or `ss` without `--force`/`-f`,
   `save …`, `remember …`): call `engram_save_session`, or `engram_save` with the memory as a
   candidate, to get a proposal; show the human the numbered preview; call `engram_commit`
   only after they approve it in the chat, with exactly the numbers they approved.

Do not run `{engram}` in the shell for any of this: its writes (`commit`, `save-session`,
`add`, `note`…) are the human's own commands, this host asks before its agent runs them, and
`engram commit` refuses in an agent's shell. Never run any other `engram` command that writes,
and never call `engram_commit` for something the human did not approve. Show the human what
engram answered.
"""


def _markdown(front: list[tuple[str, str]], body: str) -> str:
    lines = ["---", *(f"{key}: {value}" for key, value in front), "---", ""] if front else []
    return "\n".join(lines) + body


def _yaml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


DESCRIPTION: Final = "engram project memory: save this session (ss -f), search, load, status"
HINT: Final = "save-session --force | ss -f [last N sessions] | search QUERY | load [TASK] | status"


def render(target: str, name: str, engram: str) -> str:
    """The text of one command file (`name` is its file name)."""
    notice = _NOTICE.format(target=target)
    typed = "The human's request: `/engram $ARGUMENTS`"
    appended = "The human's request is what they typed after `/engram`."
    if target == "claude":
        # read and proposal tools only: an allowed-tools entry holds for the whole /engram turn
        # and for whatever the model runs in it (measured in Claude Code 2.1.332), so no write
        allowed = ", ".join(
            f"mcp__engram__engram_{tool}" for tool in ("search", "load", "status", "save_session")
        )
        front = [
            ("description", _yaml_str(DESCRIPTION)),
            ("argument-hint", _yaml_str(HINT)),
            ("allowed-tools", _yaml_str(allowed)),
            ("disable-model-invocation", "true"),
        ]
        return _markdown(front, f"<!-- {notice} -->\n\n" + instructions(engram, typed, target))
    if target == "gemini":
        body = instructions(engram, "The human's request: `/engram {{args}}`", target)
        return f"# {notice}\ndescription = {_yaml_str(DESCRIPTION)}\nprompt = '''\n{body}'''\n"
    if target == "codex":
        if name == "openai.yaml":
            return f"# {notice}\npolicy:\n  allow_implicit_invocation: false\n"
        front = [
            ("name", "engram"),
            ("description", _yaml_str(DESCRIPTION + ". Use only when the human types $engram.")),
        ]
        request = "The human's request is what they typed after `$engram`."
        return _markdown(front, f"<!-- {notice} -->\n\n" + instructions(engram, request, target))
    if target == "opencode":
        front = [("description", _yaml_str(DESCRIPTION))]
        return _markdown(front, f"<!-- {notice} -->\n\n" + instructions(engram, typed, target))
    if target == "cursor":
        return f"<!-- {notice} -->\n\n" + instructions(engram, appended, target)
    if target == "vscode":
        front = [
            ("description", _yaml_str(DESCRIPTION)),
            ("argument-hint", _yaml_str(HINT)),
            ("agent", "agent"),
        ]
        return _markdown(front, f"<!-- {notice} -->\n\n" + instructions(engram, appended, target))
    if target == "windsurf":
        front = [("description", _yaml_str(DESCRIPTION))]
        return _markdown(front, f"<!-- {notice} -->\n\n" + instructions(engram, appended, target))
    raise ValueError(f"no /engram command for {target!r}")


def _claude_dir(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"


def _places(target: str, global_: bool, workspace: Path, env: Mapping[str, str]) -> list[Path] | None:
    home = home_of(env)
    if target == "claude":
        return [(_claude_dir(home, env) if global_ else workspace / ".claude") / "commands" / "engram.md"]
    if target == "gemini":
        return [(home if global_ else workspace) / ".gemini" / "commands" / "engram.toml"]
    if target == "codex":
        skill = (home if global_ else workspace) / ".agents" / "skills" / "engram"
        return [skill / "SKILL.md", skill / "agents" / "openai.yaml"]
    if target == "opencode":
        folder = home / ".config" / "opencode" if global_ else workspace / ".opencode"
        return [folder / "commands" / "engram.md"]
    if target == "cursor":
        return [(home if global_ else workspace) / ".cursor" / "commands" / "engram.md"]
    if target == "vscode":
        folder = vscode_user_dir(home, env) / "prompts" if global_ else workspace / ".github" / "prompts"
        return [folder / "engram.prompt.md"]
    if target == "windsurf" and global_:
        return [home / ".codeium" / "windsurf" / "global_workflows" / "engram.md"]
    return None


def command_files(
    target: str, global_: bool, workspace: Path, env: Mapping[str, str] = os.environ
) -> list[CommandFile]:
    """The `/engram` command files of `target` at this scope; empty when the host has none."""
    paths = _places(target, global_, workspace, env)
    if not paths:
        return []
    home = home_of(env)
    engram = engram_command()
    base = home if global_ else workspace
    return [
        CommandFile(
            target,
            "global" if global_ else "workspace",
            path,
            display_path(path, workspace, home),
            render(target, path.name, engram),
            base,
        )
        for path in paths
    ]


def is_ours(text: str) -> bool:
    return MARK in text


# --- link, unlink, doctor ----------------------------------------------------------------------
LABEL: Final = "/engram command"
COMMAND_MISSING: Final = "host.command_missing"
COMMAND_STALE: Final = "host.command_stale"


def link_command(file: CommandFile, *, force: bool, dry_run: bool) -> Result:
    """Write the command (or bring a stale one of ours up to date); a file of that name that is
    not engram's is left alone unless `force`, which keeps it as a backup for unlink to restore."""
    try:
        before = read(file.path)
    except HostError as exc:
        return Result(file.target, file.shown, "error", exc.message, code=exc.code)
    if before == file.text:
        return Result(file.target, file.shown, "unchanged", LABEL)
    foreign = before is not None and not is_ours(before)
    if foreign and not force:
        return Result(
            file.target,
            file.shown,
            "skipped",
            f"{LABEL}: a file there is not engram's; left alone (use --force to replace it)",
        )
    if not dry_run:
        mode = file.path.stat().st_mode & 0o7777 if before is not None else 0o644
        if before is None:  # engram's own file: unlink removes it, whatever `.bak` lies beside
            mark_created(file.path)
        elif foreign:  # a `.bak` beside it is no record of it, a created mark a stale one
            keep_as_original(file.path, before.encode("utf-8"))
        write_atomic(real_path(file.path), file.text.encode("utf-8"), mode=mode)  # through a link
    action = "added" if before is None else "updated"
    return Result(file.target, file.shown, action, LABEL, diff(file.shown, before, file.text))


def unlink_command(file: CommandFile, *, dry_run: bool) -> Result:
    """Remove engram's command (restoring a file `--force` replaced), then the folders above it
    that are left empty, up to the workspace or home folder."""
    in_workspace = file.scope == "workspace"
    try:
        before = read(file.path)
    except HostError as exc:
        return Result(file.target, file.shown, "error", exc.message, code=exc.code)
    kept = original(file.path, in_workspace=in_workspace)
    if before is None:
        return Result(file.target, file.shown, "absent", LABEL)
    if not is_ours(before):
        return Result(
            file.target, file.shown, "skipped", f"{LABEL}: the file there is not engram's; left alone"
        )
    if file.path.is_symlink():  # the user's link (dotfiles): link wrote through it, unlink leaves it
        return Result(file.target, file.shown, "skipped", f"{LABEL}: a symbolic link of yours; left alone")
    restore = kept if kept is not None and not is_ours(kept) else None
    if not dry_run:
        if restore is not None:
            write_atomic(file.path, restore.encode("utf-8"), mode=file.path.stat().st_mode & 0o7777)
        else:
            file.path.unlink()
        drop_backup(file.path, in_workspace=in_workspace)
        if restore is None:
            prune_empty(file.path.parent, file.base)
    action = "restored" if restore is not None else "removed"
    return Result(file.target, file.shown, action, LABEL, diff(file.shown, before, restore))


def _named(text: str) -> str | None:
    """How a command file of ours names the `engram` CLI (its "Do not run `…` in the shell")."""
    found = re.search(r"Do not run `(.+?)` in the shell", text)
    return found.group(1) if found else None


def check_command(file: CommandFile, env: Mapping[str, str] = os.environ) -> Finding | None:
    """`host.command_missing` / `host.command_stale` for one command file, else None (a file
    there that is not engram's is the user's own command and is not reported). A workspace
    command is committed, so it is expected to name the bare `engram`; when the name is all that
    differs, the finding says so instead of calling the file another version's."""
    fix = f"run `engram link {file.target}" + (" --global`" if file.scope == "global" else "`")
    try:
        text = read(file.path)
    except HostError:
        text = ""
    if text is None:
        return Finding(COMMAND_MISSING, file.shown, f"no {LABEL} for this host", fix)
    if not is_ours(text):
        return None
    shared = file.scope == "workspace"
    expected = render(file.target, file.path.name, "engram") if shared else file.text
    if text == expected:
        return None
    named = _named(text)
    if named is None or text != render(file.target, file.path.name, named):
        return Finding(
            COMMAND_STALE,
            file.shown,
            f"the {LABEL}'s instructions are another engram version's, not this one's",
            fix,
        )
    shown = untrusted.line(named)
    if not shared:
        return Finding(
            COMMAND_STALE,
            file.shown,
            f"the {LABEL} names engram as {shown!r}, and this installation is {engram_command()!r}",
            fix,
        )
    off = off_path(env)
    return Finding(
        COMMAND_STALE,
        file.shown,
        f"the {LABEL} names engram by the path {shown!r}, which exists on this machine only (its "
        "instructions are this version's)",
        f"{fix} to write the bare name engram"
        if off is None
        else f"{path_fix(off, env)}; then {fix} to write the bare name engram",
    )
