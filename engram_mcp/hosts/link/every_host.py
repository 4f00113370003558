"""`engram link all` / `engram unlink all`: every target engram knows, in turn (TARGETS).

One host's failure (a config that does not parse, another tool's `engram` entry) is that host's
result and never stops the next; a host with no file at this scope (Windsurf's project, say) is
skipped, naming the `--global` command that has one. What holds for every host alike is said
once, before anything is written: PATH must find this installation for the project's files
(link.portable), and the folder should be in git.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from engram_mcp.hosts.edits import Result
from engram_mcp.hosts.errors import LinkRefused
from engram_mcp.hosts.link.link import (
    NOT_PORTABLE,
    OUTSIDE_GIT,
    Warn,
    in_git,
    link,
    outside_git,
    portable,
    unlink,
)
from engram_mcp.hosts.targets import TARGETS, HostFile, Skip, resolve

ALL: Final = "all"
"""The target word for every host."""


def _no_file_here(
    command: str, target: str, global_: bool, workspace: Path, env: Mapping[str, str]
) -> Result | None:
    """A `skipped` result for a target with no file at this scope (not Claude's user scope,
    which `link` prints instead), or None."""
    resolved = resolve(target, global_, workspace, env)
    if not isinstance(resolved, Skip) or resolved.message == "claude-global":
        return None
    user = resolve(target, True, workspace, env)
    shown = user.shown if isinstance(user, HostFile) else target
    done = "links" if command == "link" else "unlinks"
    message = f"{resolved.message}: nothing to do here; `engram {command} {target} --global` {done} yours"
    return Result(target, shown, "skipped", message)


def _refused(target: str, exc: LinkRefused) -> Result:
    return Result(target, "-", "error", exc.message, code=exc.code)


def link_all(
    workspace: Path,
    *,
    global_: bool = False,
    force: bool = False,
    dry_run: bool = False,
    no_hook: bool = False,
    machine_local: bool = False,
    warn: Warn,
    env: Mapping[str, str] = os.environ,
) -> list[Result]:
    """`link` for every target at one scope, each one's results in turn.

    Raises:
        LinkRefused: ENGRAM_NOT_ON_PATH for the project's files; nothing was written."""
    if not global_:
        portable("link all", machine_local=machine_local, warn=warn, env=env)
        if not in_git(workspace):
            warn(OUTSIDE_GIT, outside_git(workspace, ALL))

    def each(code: str, message: str) -> None:
        if code not in (NOT_PORTABLE, OUTSIDE_GIT):  # said once above, for every host
            warn(code, message)

    results: list[Result] = []
    for target in TARGETS:
        if (skipped := _no_file_here("link", target, global_, workspace, env)) is not None:
            results.append(skipped)
            continue
        try:
            results += link(
                target,
                workspace,
                global_=global_,
                force=force,
                dry_run=dry_run,
                no_hook=no_hook,
                machine_local=machine_local,
                warn=each,
                env=env,
            )
        except LinkRefused as exc:
            results.append(_refused(target, exc))
    return results


def unlink_all(
    workspace: Path,
    *,
    global_: bool = False,
    force: bool = False,
    dry_run: bool = False,
    env: Mapping[str, str] = os.environ,
) -> list[Result]:
    """`unlink` for every target at one scope, each one's results in turn; a host never linked
    says `absent`."""
    results: list[Result] = []
    for target in TARGETS:
        if (skipped := _no_file_here("unlink", target, global_, workspace, env)) is not None:
            results.append(skipped)
            continue
        try:
            results += unlink(target, workspace, global_=global_, force=force, dry_run=dry_run, env=env)
        except LinkRefused as exc:
            results.append(_refused(target, exc))
    return results


def failed_targets(results: list[Result]) -> list[str]:
    """The targets with a failed result, in order, each once."""
    return list(dict.fromkeys(r.target for r in results if r.failed))
