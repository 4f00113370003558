"""Every test gets a private HOME and ENGRAM_HOME; nothing touches a real store or host config.
The optional vector signal is off (ENGRAM_VECTORS=0) unless a test turns it on."""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import pytest

from engram_mcp.ops import agent_shell
from tests.support.paths import FIXTURES

pytest_plugins = ["tests.support.meaning"]
"""The MiniLM fixtures (`minilm`, `meaning_on`), for the modules marked `with_minilm`."""

PROCESS_TESTS = Path(__file__).resolve().parent / "process"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/process/ carries the `process` marker: `-m "not process"` leaves
    out the suites that start engram processes at once or kill them."""
    for item in items:
        if item.path.is_relative_to(PROCESS_TESTS):
            item.add_marker(pytest.mark.process)


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME and ENGRAM_HOME point into tmp_path; engram's own variables are cleared."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ENGRAM_HOME", str(home / ".config" / "engram"))
    for name in ("ENGRAM_WORKSPACE", "ENGRAM_READ_ONLY", "ENGRAM_SESSION_OBJECTIVE", "ENGRAM_LOG"):
        monkeypatch.delenv(name, raising=False)
    # BM25's exact scores are pinned throughout; the vector signal (installed by `make test`)
    # is switched on only by the tests that are about it (tests/store/test_vectors.py).
    monkeypatch.setenv("ENGRAM_VECTORS", "0")
    return home


@pytest.fixture(autouse=True)
def human_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-process `engram` command runs as the human's, at a terminal (SPEC §7): the suite
    may itself run in an agent's shell or without a terminal. Tests of the agent's shell give
    engram_mcp.ops.agent_shell.observe their own Observation; a subprocess sees the real one (a
    human-path subprocess runs in a terminal of its own: tests/support/terminal.py)."""
    human = agent_shell.Observation(stdin_tty=True, controlling_tty=True, environ={})
    monkeypatch.setattr(agent_shell, "observe", lambda: human)


@pytest.fixture(autouse=True)
def engram_on_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    """This installation's scripts folder goes first on PATH, as after the README's install
    (`make test` runs the venv's python without it): a workspace `engram link` writes the bare
    `engram-mcp` only then, and refuses otherwise (issue 22). Tests of the other state set PATH
    themselves (tests/hosts/test_portable_links.py)."""
    scripts = Path(sysconfig.get_path("scripts"))
    monkeypatch.setenv("PATH", os.pathsep.join([str(scripts), os.environ.get("PATH", os.defpath)]))
    return scripts


@pytest.fixture
def engram_home(private_home: Path) -> Path:
    return private_home / ".config" / "engram"


@pytest.fixture
def workspace(tmp_path: Path, engram_home: Path) -> Path:
    """A copy of fixtures/workspace, with fixtures/home as the user scope."""
    target = tmp_path / "ws"
    shutil.copytree(FIXTURES / "workspace", target)
    shutil.copytree(FIXTURES / "home", engram_home)
    return target


@pytest.fixture
def ws(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The workspace copy as the current folder, where `engram` finds it (the CLI tests)."""
    monkeypatch.chdir(workspace)
    return workspace


@pytest.fixture
def empty_workspace(tmp_path: Path) -> Path:
    """A folder with no .engram/ at all."""
    target = tmp_path / "empty"
    target.mkdir()
    return target


@pytest.fixture(autouse=True)
def yama_restricts_ptrace(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """In-process doctor runs as on a machine whose Yama refuses same-user ptrace, so their
    findings do not depend on this machine's kernel; tests of `ui.memory_readable` set their own
    (tests/ui/test_secrets_after_the_door.py)."""
    from engram_mcp.hosts.doctor import health

    scope = tmp_path_factory.getbasetemp() / "ptrace_scope"
    scope.write_text("1\n", encoding="ascii")
    monkeypatch.setattr(health, "PTRACE_SCOPE", scope)
