"""Issue 21, "A new user's rule is not in their session": a store made by following the README's
Quick start literally (real `engram` processes, a private HOME, the venv's bin on PATH) gives
the Quick start's rule to the SessionStart hook, run as Claude Code runs it, and to `engram
load` with no task; no `--always` anywhere. Both say why on their first line."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import terminal
from tests.support.gitrepo import git, init
from tests.support.paths import ENGRAM, REPO

HOOK_INPUT = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}
"""What Claude Code writes on the SessionStart hook's stdin (with the session's `cwd`)."""


def quick_start_commands() -> list[list[str]]:
    """Every `engram …` line of the README's Quick start code blocks, in order, as argv."""
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme.split("\n## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(line, comments=True) for line in lines if line.startswith("engram ")]


@pytest.fixture
def quick_start(tmp_path: Path) -> tuple[Path, dict[str, str], list[str]]:
    """(the project, the environment, the Quick start's `engram add` argv) after following
    the Quick start in a fresh git repository, with the commands the venv put on PATH."""
    home = tmp_path / "user"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(HOME=str(home), PATH=f"{Path(ENGRAM).parent}{os.pathsep}{env.get('PATH', '')}")
    project = init(tmp_path / "your-project")
    commands = quick_start_commands()
    added = [argv for argv in commands if argv[:2] == ["engram", "add"]]
    assert added and all("--always" not in argv for argv in commands), commands
    for argv in commands:  # as a shell finds them: on PATH (the launcher execs a full path)
        program = shutil.which(argv[0], path=env["PATH"])
        assert program, argv
        done = terminal.run([program, *argv[1:]], env=env, cwd=project, timeout=60)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return project, env, added[0]


def test_the_quick_start_rule_reaches_the_hook_and_a_load_with_no_task(
    quick_start: tuple[Path, dict[str, str], list[str]],
) -> None:
    project, env, added = quick_start
    kind, title, body = added[2:5]
    assert kind == "rule"
    settings = json.loads((project / ".claude" / "settings.json").read_text("utf-8"))
    (hook,) = [h for entry in settings["hooks"]["SessionStart"] for h in entry["hooks"]]
    hooked = subprocess.run(
        hook["command"],
        shell=True,
        input=json.dumps({**HOOK_INPUT, "cwd": str(project)}),
        cwd=project.parent,  # the host passes the project as `cwd` on stdin
        env=env,
        capture_output=True,
        text=True,
        timeout=hook["timeout"],
    )
    assert hooked.returncode == 0, hooked.stderr
    loaded = subprocess.run(
        [ENGRAM, "load"], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )
    assert loaded.returncode == 0, loaded.stderr
    for out in (hooked.stdout, loaded.stdout):
        assert f"Title: {title}\n" in out and body in out, out
        assert "No memory matched" not in out
        first = out.splitlines()[0]
        assert re.fullmatch(
            r"engram: the store is small \(1 memory, \d+ tokens\): loaded all of it, rules and gotchas first\.",
            first,
        ), first
    assert hooked.stdout.splitlines()[0] == loaded.stdout.splitlines()[0]
    assert re.search(r"^engram: loaded 1 memories \(\d+ tokens\) index [0-9a-f]{12}$", hooked.stdout, re.M)


def test_a_grown_store_still_gives_the_rule_to_the_session_by_routing(
    quick_start: tuple[Path, dict[str, str], list[str]],
) -> None:
    """Past the budget the store is routed, and the project's rule (no paths, no `always`)
    still comes right after the core tier, in the hook and in `engram load` alike."""
    project, env, added = quick_start
    title = added[3]
    memory = project / ".engram" / "memory"
    for n in range(250):
        (memory / f"shelf-{n:03d}.md").write_text(
            f"---\nid: shelf-{n:03d}\ntype: fact\ntitle: Warehouse shelf {n} layout\n---\n"
            f"Shelf {n} holds the boxes of aisle {n % 7}.\n"
        )
    git(project, "checkout", "-q", "-b", "feature/shelf-labels")
    git(project, "add", ".engram/memory")
    git(project, "commit", "-q", "-m", "Label the shelves")
    hooked = subprocess.run(
        [ENGRAM, "hook", "session-start"],
        input=json.dumps({**HOOK_INPUT, "cwd": str(project)}),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    loaded = subprocess.run(
        [ENGRAM, "load"], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )
    for out in (hooked.stdout, loaded.stdout):
        first = out.splitlines()[0]
        assert first.startswith('engram: routed by branch "feature/shelf-labels" and 1 recent commit: '), (
            first
        )
        assert first.endswith(" of 251 memories, the project's rules first.")
        assert f"Title: {title}\n" in out
    assert hooked.stdout.splitlines()[0] == loaded.stdout.splitlines()[0]
