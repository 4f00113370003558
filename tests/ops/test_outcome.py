"""The one StoreError → Outcome adapter: a write's error says whether anything was written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli.main import main
from engram_mcp.ops.outcome import store_failure
from engram_mcp.ops.wording import tool_wording
from store.errors import NotFound, TokenRefused, UnsafePath
from store.store import Store
from store.write import transaction


def test_a_write_error_says_nothing_was_written() -> None:
    """engram's own choice: the model and the human learn that retrying is safe."""
    outcome = store_failure(
        TokenRefused("ENGRAM_TOKEN_USED", "this token was already used"), writing=True, words=tool_wording
    )
    assert outcome.text == "ENGRAM_TOKEN_USED: this token was already used. Nothing was written."
    assert outcome.diagnostics == (
        ("ENGRAM_TOKEN_USED", "this token was already used. Nothing was written."),
    )
    assert not outcome.ok


def test_a_message_that_already_says_so_is_not_repeated() -> None:
    outcome = store_failure(
        TokenRefused("ENGRAM_INTEGRITY", "edited; nothing was written, propose again"),
        writing=True,
        words=tool_wording,
    )
    assert outcome.text == "ENGRAM_INTEGRITY: edited; nothing was written, propose again"


def test_a_read_error_is_shown_as_the_store_says_it() -> None:
    assert (
        store_failure(NotFound("no memory with id 'x'"), writing=False, words=tool_wording).text
        == "ENGRAM_NOT_FOUND: no memory with id 'x'"
    )


def test_an_error_after_the_journal_began_promises_nothing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seal refused once the files are renamed in: the journal completes the write later, so
    the outcome must not say that nothing was written."""

    def refuse(store: Store, paths: Any) -> None:
        raise UnsafePath(".engram/seals.log is not a regular file")

    store = Store(workspace)
    memory = workspace / ".engram" / "memory"
    monkeypatch.setattr(transaction, "seal", refuse)
    with pytest.raises(UnsafePath) as caught, transaction.write_lock(store):
        transaction.apply(store, [(memory / "one.md", b"x"), (memory / "two.md", b"y")])
    assert caught.value.changed
    assert "Nothing was written" not in store_failure(caught.value, writing=True, words=tool_wording).text
    assert (workspace / ".engram" / "journal.json").exists()  # rolled forward by the next write


def test_a_refused_cli_commit_says_nothing_was_written(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(workspace)
    assert main(["commit", "garbage"]) == 1
    assert "ENGRAM_TOKEN_UNKNOWN" in (err := capsys.readouterr().err) and "Nothing was written." in err
