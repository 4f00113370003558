"""Each surface's words for each hint (engram_mcp.ops.outcome.HINT_KINDS): the tools name the
tool call an agent makes next (`tool_wording`), the CLI and the review page the command or flag
a human types (`cli_wording`).

Light on purpose: the read tools and the tool glue word errors with it, so it imports nothing
of the write path.
"""

from __future__ import annotations

from typing import Final

from store.errors import Next

COMMIT_HINT: Final = (
    "Show these candidates to the human. Call engram_commit with this approval_token and "
    'approve: "all" or the approved numbers only after the human explicitly approves.'
)

_TOOL: Final = {
    "commit": COMMIT_HINT,
    "fetch_body": 'fetch a body with engram_load {"id": "<id>"}',
    "list_ids": "engram://index lists every id",
    "find_ids": "search with engram_search to find ids",
    "search_or_save": "Search with engram_search, or propose knowledge with engram_save.",
    "route_task": "or engram_route for a task description",
    "save_instead": "call engram_save with candidates instead",
    "approve": "approve",
    "approve_forms": (
        'approve takes "all", an array of candidate numbers like [1, 3], or a string like "1,3"'
    ),
    "propose_again": "propose it again (engram_save or engram_save_session) to show the human its new verdict",
}


def tool_wording(hint: Next) -> str:
    """The tools' words for a hint."""
    if hint.kind == "token":
        return f"approval_token: {hint.arg('token')} (expires {hint.arg('expires')})"
    if hint.kind in _TOOL:
        return _TOOL[hint.kind]
    raise ValueError(f"no tool wording for the hint {hint.kind!r}")


_CLI: Final = {
    "fetch_body": "print a body with `engram load --id ID`",
    "list_ids": "`engram list` shows every id",
    "find_ids": "`engram list` shows the ids",
    "search_or_save": "Search with `engram search WORDS`, or add knowledge with `engram add`.",
    "route_task": "or `engram route TASK` for a task description",
    "save_instead": "add one with `engram add`",
    "approve": "--approve",
    "approve_forms": '--approve takes "all" or candidate numbers like 1,3',
    "propose_again": "run `engram save-session` (or the command that made it) again to propose it afresh",
}


def cli_wording(hint: Next) -> str:
    """The CLI's words for a hint (engram_mcp.ops.outcome.HINT_KINDS; the tools' are in
    engram_mcp.ops.wording): the command or flag, where the tools name the tool call."""
    if hint.kind == "token":
        return f"approval token: {hint.arg('token')} (expires {hint.arg('expires')})"
    if hint.kind == "commit":
        token = hint.arg("token")
        return (
            f"Nothing is saved until you commit: `engram commit {token}` saves every candidate, "
            f"`engram commit {token} --approve 1,3` only those numbers."
        )
    if hint.kind in _CLI:
        return _CLI[hint.kind]
    raise ValueError(f"no CLI wording for the hint {hint.kind!r}")
