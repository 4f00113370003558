"""Issue 13: importers from every host's own files propose candidates; nothing is written
without approval. Export writes every memory as JSON lines; history follows supersedes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import orjson
import pytest

from engram_mcp.cli.main import main
from engram_mcp.intake import importers
from store.store import Store
from store.write import commits, proposals
from tests.support.gitrepo import commit_all, init, memory
from tests.support.paths import FIXTURES
from tests.support.snapshots import memory_state

PROJECT = FIXTURES / "importers" / "project"


def _titles(source: str, workspace: Path = PROJECT) -> list[tuple[str, str]]:
    return [(c["type"], c["title"]) for c in importers.read(source, workspace).candidates]


def test_claude_md_proposes_one_candidate_per_instruction() -> None:
    """Issue 13: CLAUDE.md items become candidates; /init's boilerplate and @imports do not."""
    assert _titles("claude-md") == [
        ("procedure", "Build: make build"),
        ("procedure", "Run the tests with make test (creates .venv on first run)"),
        ("procedure", "Lint before every commit"),
        ("rule", "Always use type hints on public functions"),
        ("rule", "Never print to stdout in the server; log to stderr"),
        ("fact", "The API lives in api/ and talks to the database through the repository layer only"),
    ]
    lint = importers.read("claude-md", PROJECT).candidates[2]
    assert "```sh\nmake lint\n```" in lint["body"] and lint["tags"] == ["commands", "claude-md"]


def test_agents_md_proposes_its_sections() -> None:
    """Issue 13: AGENTS.md (the agents.md format: setup, testing, PR sections)."""
    assert _titles("agents-md") == [
        ("procedure", "Install deps: pnpm install"),
        ("procedure", "Start dev server: pnpm dev"),
        ("procedure", "Run pnpm turbo run test --filter <project_name> before you open a pull request"),
        ("procedure", "Fix any test or type errors until the whole suite is green"),
        ("convention", "Title format: [<project_name>] <Title>"),
        ("decision", "We decided to squash-merge every pull request instead of rebasing"),
    ]


def test_cursor_rules_become_one_candidate_each_with_globs_as_paths() -> None:
    """Issue 13: `.cursor/rules/*.mdc` (description, globs, alwaysApply front matter)."""
    found = importers.read("cursor-rules", PROJECT).candidates
    assert [(c["title"], c.get("paths")) for c in found] == [
        ("Write commit messages in the imperative mood, under 72 characters in the subject line", None),
        ("TypeScript conventions for the web app", ["web/**/*.ts", "web/**/*.tsx"]),
    ]


def test_copilot_instructions_and_path_specific_instructions() -> None:
    """Issue 13: `.github/copilot-instructions.md` and `*.instructions.md` with applyTo."""
    found = importers.read("copilot", PROJECT).candidates
    assert [c["title"] for c in found][:2] == [
        "This is a Go service that exposes a REST API for invoices",
        'Must return wrapped errors with fmt.Errorf("...: %w", err)',
    ]
    assert found[-1]["paths"] == ["migrations/**/*.sql"]


def test_claude_auto_memory_is_found_under_the_project_folder_of_the_git_root(
    tmp_path: Path, private_home: Path
) -> None:
    """Issue 13: `~/.claude/projects/<git root, non-alphanumerics as ->/memory/`: topic files
    (name, description, type) and MEMORY.md lines that are not links to them."""
    repo = init(tmp_path / "my.repo")
    (repo / "sub").mkdir()
    folder = private_home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(repo)) / "memory"
    shutil.copytree(FIXTURES / "importers" / "claude-memory", folder)
    found = importers.read("claude-memory", repo / "sub", home=private_home)
    assert [(c["type"], c["title"], c.get("scope", "project")) for c in found.candidates] == [
        ("rule", "Integration tests hit a real database", "project"),
        ("decision", "Release freeze", "project"),
        ("preference", "User is a data scientist", "user"),
        ("convention", "The staging database is reset every Monday at 06:00 UTC", "project"),
    ]
    assert found.where.startswith("~/.claude/projects/")


def test_import_proposes_through_the_verdicts_and_writes_nothing_until_commit(
    tmp_path: Path, engram_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13 acceptance: candidates are redacted, get verdicts and a token; nothing is
    written until `engram commit`."""
    ws = tmp_path / "ws"
    shutil.copytree(PROJECT, ws)
    (ws / "AGENTS.md").write_text(
        (ws / "AGENTS.md").read_text("utf-8")
        + "\n- Never commit the token ghp_0123456789abcdefghijABCDEFGHIJ012345 anywhere.\n",
        "utf-8",
    )
    Store(ws).init()
    monkeypatch.chdir(ws)
    before = memory_state(ws, engram_home)
    capsys.readouterr()
    assert main(["import", "agents-md", "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)["data"]
    assert [c["verdict"] for c in data["candidates"]] == ["ADD"] * 7
    assert data["redactions"] == 2  # title and body
    assert "ghp_" not in orjson.dumps(data).decode()
    after = memory_state(ws, engram_home)
    assert {k: v for k, v in after.items() if "pending" not in k} == before
    assert main(["commit", data["approval_token"], "--approve", "6"]) == 0
    written = sorted(p.name for p in (ws / ".engram" / "memory").glob("*.md"))
    assert written == ["we-decided-to-squash-merge-every-pull-request-instead-of.md"]
    capsys.readouterr()
    assert main(["import", "agents-md", "--json"]) == 0
    again = orjson.loads(capsys.readouterr().out)["data"]["candidates"]
    assert again[5]["verdict"].startswith("NOOP duplicate of we-decided")


def test_export_writes_every_memory_as_json_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13: `engram export --json` — front matter and body of every memory, one a line."""
    ws = tmp_path / "ws"
    memory(ws, "a-fact", "A fact", "Body A.", tags=["x"])
    memory(ws, "b-gone", "Expired fact", "Body B.", valid_until="2001-01-01")
    monkeypatch.chdir(ws)
    capsys.readouterr()
    assert main(["export", "--json"]) == 0
    lines = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["id"], r["front_matter"]["title"], r["body"]) for r in lines] == [
        ("a-fact", "A fact", "Body A.\n"),
        ("b-gone", "Expired fact", "Body B.\n"),
    ]
    assert lines[0]["front_matter"]["tags"] == ["x"] and lines[0]["scope"] == "project"


def test_history_follows_the_supersede_chain_both_ways_with_the_git_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13: `engram history ID` — older and newer memories, and the file's commits."""
    repo = init(tmp_path / "repo")
    store = Store(repo)
    for step, (title, extra) in enumerate(
        [
            ("Port is 5432", {}),
            ("Port is 5433", {"supersedes": "port-is-5432"}),
            ("Port is 6000", {"supersedes": "port-is-5433"}),
        ]
    ):
        entries, n = proposals.draft(
            store, [{"type": "fact", "title": title, "body": f"{title}.", "refs": [], **extra}]
        )
        commits.commit(store, proposals.store_proposal(store, entries, n, "save").token, "all")
        commit_all(repo, f"step {step}")
    monkeypatch.chdir(repo)
    capsys.readouterr()
    assert main(["history", "port-is-5433", "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)["data"]
    assert [(r["id"], r["status"]) for r in data["chain"]] == [
        ("port-is-5432", "superseded"),
        ("port-is-5433", "superseded"),
        ("port-is-6000", "active"),
    ]
    assert [c["subject"] for c in data["commits"]] == ["step 2", "step 1"]
    assert main(["history", "port-is-6000"]) == 0
    text = capsys.readouterr().out
    assert "- port-is-6000 [active] Port is 6000" in text and "git log of its file (1 commit):" in text
