"""The tools' words for each hint (engram_mcp.outcome.HINT_KINDS): what an agent calls next,
named as the tool call. The CLI's words for the same hints are in engram_mcp.cli.common.

Light on purpose: the read tools and the tool glue word errors with it, so it imports nothing
of the write path.
"""

from __future__ import annotations

from typing import Final

from engram_mcp.outcome import Hint

COMMIT_HINT: Final = (
    "Show these candidates to the human. Call engram_commit with this approval_token and "
    'approve: "all" or the approved numbers only after the human explicitly approves.'
)

_FIXED: Final = {
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


def tool_wording(hint: Hint) -> str:
    """The tools' words for a hint."""
    if hint.kind == "token":
        return f"approval_token: {hint.arg('token')} (expires {hint.arg('expires')})"
    if hint.kind in _FIXED:
        return _FIXED[hint.kind]
    raise ValueError(f"no tool wording for the hint {hint.kind!r}")
