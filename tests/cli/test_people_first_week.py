"""A person's first week with the CLI (issue 22, "Smaller"): `status` says what a person needs
(not the hash of nothing), `list` lines up and counts "1 memory", `add --yes` says what it
redacted, and `edit` keeps the person's text when the edit is refused."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engram_mcp.cli.main import main
from tests.support.cli import run

MEMORY = "---\nid: {id}\ntype: {type}\ntitle: {title}\n---\nAbout {title}.\n"
EMPTY_SHA256: str = "e3b0c44298fc"
"""The first 12 hex digits of sha256(b""): what status showed for an empty store."""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repository with `engram init` run in it, as the current folder."""
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, timeout=60)
    monkeypatch.chdir(root)
    assert main(["init"]) == 0
    return root


def _memory(root: Path, memory_id: str, title: str, kind: str = "fact") -> Path:
    path = root / ".engram" / "memory" / f"{memory_id}.md"
    path.write_text(MEMORY.format(id=memory_id, type=kind, title=title), "utf-8")
    return path


# --- status ----------------------------------------------------------------------------------


def test_status_of_a_new_store_shows_no_hash_of_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """status showed `index: e3b0c44298fc (0 files)`, the sha256 of no bytes at all."""
    code, out, _ = run(capsys, "status")
    assert code == 0
    assert EMPTY_SHA256 not in out and "index:" not in out
    assert main(["add", "fact", "The pager rota", "It changes on Mondays.", "--yes"]) == 0
    code, out, _ = run(capsys, "status")
    assert re.search(r"^index: [0-9a-f]{12} \(the hook's proof line", out, re.M), out
    assert f"workspace: {repo} (a git repository)" in out


def test_status_says_where_the_user_scope_is_and_names_unusable_files(
    repo: Path, engram_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _memory(repo, "pager-rota", "The pager rota")
    (repo / ".engram" / "working").mkdir(exist_ok=True)
    assert main(["note", "remember the staging password rotation"]) == 0
    (repo / ".engram" / "memory" / "open-list.md").write_text("---\nid: open-list\ntags: [a\n---\n", "utf-8")
    code, out, _ = run(capsys, "status")
    assert code == 0
    assert f"user scope ($ENGRAM_HOME): {engram_home}" in out
    assert "1 working note\n" in out  # not "1 working notes"
    assert "1 file cannot be used (fix by hand): open-list (.engram/memory/open-list.md)" in out
    assert "0 pending proposals" in out


def test_status_outside_git_says_memories_cannot_be_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert main(["init"]) == 0
    code, out, _ = run(capsys, "status")
    assert code == 0
    assert "(not in a git repository: its memories cannot be shared or reviewed through git)" in out


def test_status_json_keeps_its_keys_and_adds_the_new_ones(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json is backward compatible: the index hash stays in data, next to what is new."""
    code, out, _ = run(capsys, "status", "--json")
    data = json.loads(out)["data"]
    assert {"workspace", "initialized", "counts", "pending_proposals", "index"} <= set(data)
    assert data["git"] is True and data["broken"] == []


# --- list ------------------------------------------------------------------------------------


def test_list_aligns_its_columns_and_counts_one_memory(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _memory(repo, "uv", "Use uv", "rule")
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "1 memory." in out and "1 memories" not in out
    _memory(repo, "rotate-the-stripe-webhook-secret", "Rotate the secret", "procedure")
    code, out, _ = run(capsys, "list")
    rows = [line for line in out.splitlines() if "[" in line]
    assert len(rows) == 2
    assert len({row.index("[") for row in rows}) == 1, rows  # the type column starts in one place
    assert rows[0].index("Rotate the secret") == rows[1].index("Use uv"), rows  # so do the titles
    assert "2 memories." in out


# --- add --yes -------------------------------------------------------------------------------


def test_add_yes_says_what_it_redacted(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The preview said "1 redaction"; `--yes` said nothing at all."""
    body = "Deploys use the key AKIAIOSFODNN7EXAMPLE from the vault."
    code, out, _ = run(capsys, "add", "fact", "The deploy key", body, "--yes")
    assert code == 0
    assert "Redacted 1 secret (aws-access-token) from the body" in out
    saved = (repo / ".engram" / "memory" / "the-deploy-key.md").read_text("utf-8")
    assert "AKIAIOSFODNN7EXAMPLE" not in saved and "[REDACTED]" in saved


def test_add_yes_without_a_secret_says_nothing_of_redaction(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "add", "fact", "The deploy day", "Deploys happen on Tuesdays.", "--yes")
    assert code == 0 and "Redacted" not in out


# --- edit ------------------------------------------------------------------------------------

BREAK = """import pathlib, sys
path = pathlib.Path(sys.argv[1])
path.write_text(path.read_text().replace("title: The pager rota", "title: The pager rota\\ntags: [oncall") + "\\nMy careful new paragraph.\\n")
"""
"""An editor session that adds a paragraph and leaves a flow sequence open."""
REPAIR = """import pathlib, sys
path = pathlib.Path(sys.argv[1])
text = path.read_text()
assert "My careful new paragraph." in text, text  # the kept edit was reopened
path.write_text(text.replace("tags: [oncall", "tags: [oncall]"))
"""
"""The next session: the person's text is there again, and they close the list."""


def _editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    path = tmp_path / "editor.py"
    path.write_text(script, "utf-8")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {path}")
    monkeypatch.delenv("VISUAL", raising=False)


def test_edit_keeps_the_persons_text_when_the_edit_is_refused(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The edit used to be thrown away whole; now it is kept (never in the memory folder), the
    message says where, and `engram edit ID` reopens it."""
    path = _memory(repo, "pager-rota", "The pager rota")
    before = path.read_bytes()
    _editor(tmp_path, monkeypatch, BREAK)
    code, _, err = run(capsys, "edit", "pager-rota")
    assert code == 1
    assert "ENGRAM_CORRUPT" in err and "nothing was written" in err
    assert path.read_bytes() == before
    kept = [
        Path(word.rstrip(":")) for word in err.split() if word.rstrip(":").endswith(".md") and "edits" in word
    ]
    assert len(kept) == 1, err
    kept_path = Path(str(kept[0]).replace("~", str(Path.home()), 1))
    assert "My careful new paragraph." in kept_path.read_text("utf-8")
    assert repo not in kept_path.parents  # nothing of it can reach git
    assert "engram edit pager-rota" in err
    _editor(tmp_path, monkeypatch, REPAIR)
    code, out, err = run(capsys, "edit", "pager-rota")
    assert code == 0, err
    assert "reopening your kept edit" in err
    assert "My careful new paragraph." in path.read_text("utf-8")
    assert not kept_path.exists()  # written: what was kept goes
