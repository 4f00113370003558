"""`engram doctor` is the store's health check too (issue 22, engram_mcp.hosts.doctor.health): settings files
ignored as a whole or in part, memory files that do not parse, state files discarded, derived
files rebuilt, a workspace outside git, a missing or unusable $ENGRAM_HOME. Each finding has a
stable code and a fix for a person; every code but the two informational ones exits 1. The
check writes nothing and survives any hostile file."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli.main import main

Check = Callable[[Path | None], list[Any]]

MEMORY = "---\nid: {id}\ntype: fact\ntitle: {title}\ntags: [ops]\n---\nAbout {title}.\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engram_home: Path) -> Path:
    """An initialised git workspace with one memory, as the current folder (and the user's
    $ENGRAM_HOME, which the tests set, made: set and missing, it is a finding)."""
    engram_home.mkdir(parents=True)
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, timeout=60)
    monkeypatch.chdir(root)
    assert main(["init"]) == 0
    _memory(root, "pager-rota", "The pager rota")
    return root


def _memory(root: Path, memory_id: str, title: str, text: str | None = None) -> Path:
    path = root / ".engram" / "memory" / f"{memory_id}.md"
    path.write_text(text if text is not None else MEMORY.format(id=memory_id, title=title), "utf-8")
    return path


@pytest.fixture
def findings() -> Check:
    """engram_mcp.hosts.doctor.health.findings with this test's environment. Imported here, not at the top,
    so the doctor tests above run (and fail by their output) on an engram without the module."""
    from engram_mcp.hosts.doctor import health

    return lambda workspace: health.findings(workspace, os.environ)


def _codes(findings: Check, workspace: Path | None) -> list[str]:
    return [f.code for f in findings(workspace)]


def _snapshot(*roots: Path) -> dict[str, tuple[int, int, bytes | None]]:
    """Every entry under `roots`: (mode, mtime, bytes of a regular file)."""
    seen: dict[str, tuple[int, int, bytes | None]] = {}

    def walk(folder: Path) -> Iterator[Path]:
        for entry in os.scandir(folder):
            yield Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                yield from walk(Path(entry.path))

    for root in roots:
        if root.exists():
            for path in walk(root):
                info = os.lstat(path)
                data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
                seen[str(path)] = (info.st_mode, info.st_mtime_ns, data)
    return seen


# --- through `engram doctor` (fail on ab538aa: "OK: nothing to fix", exit 0) -----------------


def test_doctor_exits_1_for_a_config_ignored_as_a_whole(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's trailing comma: every setting fell back to its default while doctor said
    "OK: nothing to fix"."""
    (repo / ".engram" / "config.json").write_text('{"load": {"budget_tokens": 3000},}\n', "utf-8")
    capsys.readouterr()
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "config.ignored  ./.engram/config.json: ignored as a whole" in out
    assert "OK: nothing to fix" not in out


def test_doctor_exits_1_for_memory_files_that_do_not_parse(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _memory(repo, "open-list", "", "---\nid: open-list\ntype: fact\ntitle: T\ntags: [a, b\n---\nBody.\n")
    _memory(repo, "twice", "", "---\nid: twice\ntype: fact\ntitle: T\ntags: [a]\ntags: [b]\n---\nBody.\n")
    capsys.readouterr()
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "memory.unparsed  ./.engram/memory/open-list.md: does not parse: " in out
    assert "memory.unparsed  ./.engram/memory/twice.md: does not parse: " in out
    assert "'tags'" in out
    assert "OK: nothing to fix" not in out


def test_engram_doctor_writes_nothing(
    repo: Path, engram_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole command, not only the check: a planted journal is reported, not replayed or
    discarded, and no derived file is written before doctor has said what it found."""
    engram = repo / ".engram"
    for name in ("index.json", "search.idx", "seals.log", "usage.json", "config-checked.json"):
        (engram / name).unlink(missing_ok=True)
    (engram / "journal.json").write_text('{"writes": []}', "utf-8")
    before = _snapshot(repo, engram_home.parent)
    assert main(["doctor"]) == 1
    assert "journal.json" in capsys.readouterr().out
    assert _snapshot(repo, engram_home.parent) == before


# --- engram_mcp.hosts.doctor.health.findings -------------------------------------------------------------


def test_a_healthy_store_has_no_finding(repo: Path, findings: Check) -> None:
    assert findings(repo) == []


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"load": {"budget_tokens": 3000},}', "not valid JSON"),
        ('{"load": {"budget_tokens": 5}}', "load.budget_tokens = 5 is out of range (allowed 100 to 32000)"),
        ('{"serach": {"vectors": false}}', "'serach' was unexpected"),
        ("\xff\xfe{}", "not valid JSON"),
    ],
    ids=["trailing-comma", "out-of-range", "unknown-key", "bad-utf8"],
)
def test_a_workspace_config_ignored_as_a_whole_names_why(
    repo: Path, text: str, named: str, findings: Check
) -> None:
    (repo / ".engram" / "config.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    [finding] = findings(repo)
    assert (finding.code, finding.file) == ("config.ignored", "./.engram/config.json")
    assert named in finding.message
    assert "every setting in it falls back" in finding.message
    assert finding.fix


def test_the_user_config_ignored_as_a_whole_is_named_in_the_home_folder(
    repo: Path, engram_home: Path, findings: Check
) -> None:
    engram_home.mkdir(parents=True, exist_ok=True)
    (engram_home / "config.json").write_text("{role: x}", "utf-8")
    [finding] = findings(repo)
    assert (finding.code, finding.file) == ("config.ignored", "~/.config/engram/config.json")


def test_a_setting_ignored_in_part_is_named(repo: Path, findings: Check) -> None:
    """search.vector_model is honoured in the user's config only (SPEC §2)."""
    (repo / ".engram" / "config.json").write_text('{"search": {"vector_model": "/tmp/x"}}', "utf-8")
    [finding] = findings(repo)
    assert finding.code == "config.setting_ignored"
    assert "search.vector_model" in finding.message


def test_planted_state_files_are_discarded_and_derived_files_rebuilt(repo: Path, findings: Check) -> None:
    """A clone's state files fail their tag: what they held is lost (exit 1); its derived files
    are rebuilt (informational)."""
    engram = repo / ".engram"
    (engram / "usage.json").write_text('{"pager-rota": 9}', "utf-8")
    (engram / "pending-approvals.json").write_text(
        '{"version": 2, "proposals": {"ab": {"status": "pending", "expires": 1e12, "tag": "00"}}}', "utf-8"
    )
    (engram / "journal.json").write_text('{"writes": []}', "utf-8")
    (engram / "seals.log").write_text('["durable/pager-rota", "0", "00"]\n', "utf-8")
    (engram / "search.idx").write_bytes(b"not an index")
    (engram / "vectors.bin").write_bytes(b"not vectors")
    (engram / "index.json").write_text('{"version": 6, "memories": {}}', "utf-8")
    found = {(f.code, f.file) for f in findings(repo)}
    assert {
        ("state.discarded", "./.engram/usage.json"),
        ("state.discarded", "./.engram/pending-approvals.json"),
        ("state.discarded", "./.engram/journal.json"),
        ("state.discarded", "./.engram/seals.log"),
        ("derived.rebuilt", "./.engram/search.idx"),
        ("derived.rebuilt", "./.engram/vectors.bin"),
        ("derived.rebuilt", "./.engram/index.json"),
    } <= found


def test_a_folder_at_a_state_files_path_is_unusable(repo: Path, findings: Check) -> None:
    (repo / ".engram" / "usage.json").mkdir()
    found = findings(repo)
    assert [(f.code, f.file) for f in found] == [("state.unusable", "./.engram/usage.json")]


def test_a_workspace_outside_git_is_informational(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engram_home: Path, findings: Check
) -> None:
    engram_home.mkdir(parents=True)
    folder = tmp_path / "notes"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert main(["init"]) == 0
    assert _codes(findings, folder) == ["workspace.outside_git"]


def test_engram_home_set_and_missing_needs_the_user(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, findings: Check
) -> None:
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "typo"))
    assert _codes(findings, repo) == ["home.missing"]


def test_the_default_home_missing_before_first_use_is_fine(
    repo: Path, engram_home: Path, monkeypatch: pytest.MonkeyPatch, findings: Check
) -> None:
    """ENGRAM_HOME unset: ~/.config/engram is made when first needed."""
    engram_home.rmdir()
    monkeypatch.delenv("ENGRAM_HOME")
    assert _codes(findings, repo) == []


def test_engram_home_that_is_a_file_is_unusable(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, findings: Check
) -> None:
    (tmp_path / "home-file").write_text("x", "utf-8")
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home-file"))
    assert _codes(findings, repo) == ["home.unusable"]


def test_the_check_writes_nothing(repo: Path, engram_home: Path, findings: Check) -> None:
    """Read-only: no secret made, no index rebuilt, no journal replayed, no temp file left."""
    engram = repo / ".engram"
    for name in ("index.json", "search.idx", "seals.log", "usage.json", "config-checked.json"):
        (engram / name).unlink(missing_ok=True)
    (engram / "config.json").write_text('{"load": {"budget_tokens": 3000}}', "utf-8")
    (engram / "journal.json").write_text('{"writes": []}', "utf-8")
    _memory(repo, "open-list", "", "---\nid: open-list\ntags: [a\n---\n")
    before = _snapshot(repo, engram_home.parent)
    assert findings(repo)
    assert _snapshot(repo, engram_home.parent) == before


def test_hostile_files_are_findings_never_a_hang_or_a_crash(
    repo: Path, tmp_path: Path, findings: Check
) -> None:
    """A FIFO, a link leading out, a huge sparse file, bad UTF-8: each reported, quickly."""
    engram = repo / ".engram"
    os.mkfifo(engram / "config.json")
    os.mkfifo(engram / "memory" / "a-fifo.md")
    (tmp_path / "outside.md").write_text(MEMORY.format(id="linked", title="Linked"), "utf-8")
    (engram / "memory" / "linked.md").symlink_to(tmp_path / "outside.md")
    (engram / "memory" / "bad-bytes.md").write_bytes(b"---\nid: bad-bytes\ntitle: \xff\xfe\n---\n")
    with (engram / "vectors.bin").open("wb") as handle:
        handle.truncate(8 << 30)  # a hole: nothing is written, and nothing may be read
    os.mkfifo(engram / "usage.json")
    began = time.monotonic()
    found = {(f.code, f.file) for f in findings(repo)}
    assert time.monotonic() - began < 5
    assert {
        ("config.ignored", "./.engram/config.json"),
        ("memory.unreadable", "./.engram/memory/a-fifo.md"),
        ("memory.unreadable", "./.engram/memory/linked.md"),
        ("memory.unparsed", "./.engram/memory/bad-bytes.md"),
        ("derived.rebuilt", "./.engram/vectors.bin"),
        ("state.unusable", "./.engram/usage.json"),
    } <= found


def test_a_hostile_problem_text_is_escaped(repo: Path, findings: Check) -> None:
    """The key names a YAML error quotes are a clone's: escaped (store.safety.untrusted)."""
    _memory(repo, "bidi", "", "---\nid: bidi\nk\u202eey: 1\nk\u202eey: 2\n---\n")
    (repo / ".engram" / "config.json").write_text('{"ro\\u202ele": 1, "\\u001b[31m": 2}', "utf-8")
    for finding in findings(repo):
        assert "\u202e" not in finding.line() and "\x1b" not in finding.line(), finding


def test_outside_any_workspace_the_user_scope_alone_is_checked(engram_home: Path, findings: Check) -> None:
    """doctor run outside a project (workspace None): the user scope, named under ~."""
    (engram_home / "memory").mkdir(parents=True)
    (engram_home / "memory" / "my-editor.md").write_text("---\nid: my-editor\ntags: [\n---\n", "utf-8")
    (engram_home / "config.json").write_text("{,}", "utf-8")
    found = [(f.code, f.file) for f in findings(None)]
    assert found == [
        ("config.ignored", "~/.config/engram/config.json"),
        ("memory.unparsed", "~/.config/engram/memory/my-editor.md"),
    ]
