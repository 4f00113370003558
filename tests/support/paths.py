"""Where the suite finds the checkout, its fixtures and the installed `engram` programs."""

from __future__ import annotations

import sys
from pathlib import Path

from engram_mcp.platform import script_name

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
ENGRAM = str(Path(sys.executable).with_name(script_name("engram")))
"""The `engram` console script of the interpreter running the suite (the venv's)."""
ENGRAM_MCP = str(Path(sys.executable).with_name(script_name("engram-mcp")))
"""The `engram-mcp` server script beside it: what a host starts."""
