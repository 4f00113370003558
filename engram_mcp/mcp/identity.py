"""What engram says about itself in the handshake: kept apart from the application, so that
`initialize` and `server/discover` are answered before anything else is imported."""

from __future__ import annotations

from typing import Final

SERVER_NAME: Final = "engram"
INSTRUCTIONS: Final = (
    "engram is this project's memory: its rules, decisions, conventions and gotchas. Before work, call "
    "engram_load with the task (or engram_search / engram_route) and follow what it returns. After work, "
    "propose lasting project knowledge with engram_save; show the preview to the human. engram_commit "
    "writes memory and needs the human's explicit approval: never call it on your own."
)
assert len(INSTRUCTIONS) <= 512
