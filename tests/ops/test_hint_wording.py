"""Every next step is a value (store.errors.Next) worded by each
surface: the tools name the tool call (engram_mcp.ops.wording), the CLI the command
(engram_mcp.cli.common). Both have words for every kind, and the store's steps reach each
surface in its own words."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_mcp.mcp.tools import DECLARED
from engram_mcp.ops.outcome import HINT_KINDS
from engram_mcp.ops.wording import cli_wording, tool_wording
from store.errors import Next
from store.store import Store
from tests.support.cli import run
from tests.support.proposals import propose
from tests.support.tools import call_tool

TOOL_NAMES = {d.name for d in DECLARED}


def _hint(kind: str) -> Next:
    return Next(kind, tuple((name, f"<{name}>") for name in HINT_KINDS[kind]))


@pytest.mark.parametrize("kind", sorted(HINT_KINDS))
def test_each_hint_kind_is_worded_by_both_surfaces(kind: str) -> None:
    tool, cli = tool_wording(_hint(kind)), cli_wording(_hint(kind))
    assert tool and cli and tool != cli
    assert "engram_" not in cli and "engram://" not in cli and "approval_token" not in cli
    for name in HINT_KINDS[kind]:
        assert f"<{name}>" in tool or kind == "commit", name  # the tools' commit line names no token
        assert f"<{name}>" in cli, name


def test_a_kind_no_surface_knows_is_refused() -> None:
    for words in (tool_wording, cli_wording):
        with pytest.raises(ValueError, match="no .* wording for the hint 'nonsense'"):
            words(Next("nonsense"))


def test_the_stores_steps_reach_each_surface_in_its_own_words(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing id, an empty search, a selection out of range: the tool's text and the CLI's."""
    missing = call_tool(ws, "engram_load", {"id": "no-such-memory"}).text
    assert (
        missing
        == "ENGRAM_NOT_FOUND: no memory with id 'no-such-memory': search with engram_search to find ids"
    )
    assert run(capsys, "load", "--id", "no-such-memory")[2] == (
        "ENGRAM_NOT_FOUND: no memory with id 'no-such-memory': `engram list` shows the ids\n"
    )
    assert call_tool(ws, "engram_search", {"query": "qwxyzzy"}).text.endswith(
        "No match: no memory shares a word with it. Try other words, or engram_route for a task description."
    )
    assert run(capsys, "search", "qwxyzzy")[1].endswith(
        "No match: no memory shares a word with it. Try other words, or `engram route TASK` for a task "
        "description.\n"
    )
    store = Store(ws)
    token = propose(store, [{"type": "fact", "title": "Zorblax", "body": "The zorblax is blue."}]).token
    store.close()
    refused = call_tool(ws, "engram_commit", {"approval_token": token, "approve": [9]}).text
    assert refused.startswith("ENGRAM_VALIDATION: approve names 9, but this proposal has candidates 1 to 1")
    assert run(capsys, "commit", token, "--approve", "9")[2].startswith(
        "ENGRAM_VALIDATION: --approve names 9, but this proposal has candidates 1 to 1"
    )
    forms = call_tool(ws, "engram_commit", {"approval_token": token, "approve": "x"}).text
    assert forms.startswith(
        'ENGRAM_VALIDATION: approve takes "all", an array of candidate numbers like [1, 3], or a '
        "string like \"1,3\", not 'x'"
    )


def test_an_import_ends_with_the_command_to_commit_it(
    ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`engram import` words its token for the CLI: the command, never the tool call."""
    source = tmp_path / "CLAUDE.md"
    source.write_text("# Notes\n\n- Always run the zorblax linter before pushing.\n", encoding="utf-8")
    code, out, err = run(capsys, "import", "claude-md", str(source))
    assert code == 0, err
    assert "approval token: " in out and "Nothing is saved until you commit: `engram commit " in out
    assert "engram_" not in out and "approval_token" not in out
