"""What the host suites share beyond tests/conftest.py."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(autouse=True)
def linux_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Host paths as on Linux (SPEC §8: ~/.config/Code/User, ~/.config/Claude), with no host
    folder or trust setting moved by the environment the suite runs in."""
    for name in ("XDG_CONFIG_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "APPDATA", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
    assert sys.platform.startswith("linux")
