"""Acceptance: save-session mines a realistic session well (issue 12, Build 5).

fixtures/transcripts-mining/ holds one Claude Code session and one Codex rollout of the same
workspace in the hosts' real JSONL formats: chatter, pasted output, tool calls, assistant text,
secrets, lines the human asked not to save, and a handful of durable knowledge lines, listed
with their expected type in expected.json. The test prints precision and recall of the mined
lines (and type accuracy) and asserts both are at least 0.9.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engram_mcp.intake.transcripts.sessions import recent_sessions, session_candidates
from store.plurals import count
from store.propose.mining import mine_text
from tests.support.paths import FIXTURES

CASE = FIXTURES / "transcripts-mining"
EXPECTED = json.loads((CASE / "expected.json").read_text("utf-8"))


@pytest.fixture
def mined_workspace(workspace: Path, private_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The two sessions where Claude Code and Codex keep them for this workspace."""
    monkeypatch.delenv("CODEX_HOME", raising=False)
    real = workspace.resolve()
    claude = private_home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(real))
    codex = private_home / ".codex" / "sessions" / "2026" / "12" / "03"
    for folder, pattern in ((claude, "claude-*.jsonl"), (codex, "rollout-*.jsonl")):
        folder.mkdir(parents=True)
        for source in CASE.glob(pattern):
            text = source.read_text("utf-8").replace("__WORKSPACE__", str(real))
            (folder / source.name.removeprefix("claude-")).write_text(text, "utf-8")
    return workspace


def test_mined_lines_have_precision_and_recall_of_at_least_0_9(mined_workspace: Path) -> None:
    said = recent_sessions(mined_workspace.resolve(), 2)
    assert len(said.sessions) == 2
    mined = mine_text("\n".join(said.texts))
    titles = [(c["type"], c["title"]) for c in mined.candidates]
    expected = EXPECTED["expected"]
    hits = [e for e in expected if any(e["phrase"].lower() in t.lower() for _, t in titles)]
    correct = [c for c in titles if any(e["phrase"].lower() in c[1].lower() for e in expected)]
    typed = [
        e
        for e in expected
        if (e["type"], e["phrase"].lower())
        in {(k, p) for k, t in titles for p in [e["phrase"].lower()] if p in t.lower()}
    ]
    precision = len(correct) / len(titles) if titles else 0.0
    recall = len(hits) / len(expected)
    print(
        f"\nsave-session mining on fixtures/transcripts-mining: precision {precision:.2f} "
        f"({len(correct)}/{len(titles)} mined lines expected), recall {recall:.2f} "
        f"({len(hits)}/{len(expected)} expected lines mined), type right for {len(typed)}/{len(hits)}"
    )
    for kind, title in titles:
        print(f"  [{kind}] {title}")
    assert precision >= 0.9 and recall >= 0.9, titles
    assert len(typed) >= 0.9 * len(hits), titles


def test_nothing_from_chat_secrets_or_unsaved_lines_is_proposed_and_the_skips_are_counted(
    mined_workspace: Path,
) -> None:
    raw, note = session_candidates(mined_workspace, 2)
    shown = json.dumps(raw)
    for phrase in EXPECTED["never"]:
        assert phrase.lower() not in shown.lower(), phrase
    skipped = EXPECTED["skipped"]
    assert f"skipped {count(skipped['secret_lines'], 'line')} holding a secret" in note
    assert f"skipped {count(skipped['unsaved_lines'], 'line')} you asked not to save" in note
