"""The near-duplicates page finds a rule said twice in other words (it said "No two memories say
nearly the same thing" with two such rules active): with the vector signal on, its pairs come
from the vector matrix, on the verdicts' bands. Real MiniLM, loaded once for the module;
skipped only when the `minilm` extra is not installed."""

from __future__ import annotations

import time
from pathlib import Path

from store.store import Store
from tests.support.meaning import with_minilm
from tests.support.store_helpers import write_memory
from tests.ui.conftest import Ui, app

pytestmark = with_minilm


def _rule(root: Path, memory_id: str, text: str) -> None:
    write_memory(root, memory_id, title=text, body=text + ".\n", type="rule")


def _settled(ui: Ui) -> str:
    """The page once the pairs are found (it reloads itself until then)."""
    deadline = time.monotonic() + 20
    while True:
        html = ui.html("/duplicates")
        if "Looking for pairs" not in html or time.monotonic() > deadline:
            return html
        time.sleep(0.05)


def test_the_pairs_page_lists_a_rule_said_twice_in_other_words(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _rule(root, "tenant-keys", "Never log tenant API keys")
    _rule(root, "tenant-keys-again", "Don't write tenant API keys to the logs")
    _rule(root, "key-rotation", "Rotate tenant API keys every 90 days")
    _rule(root, "postgres", "Use Postgres for persistent data")
    store = Store(root, background=False)
    ui = Ui(app(store))
    assert ui.login().status_code == 303
    try:
        html = _settled(ui)
    finally:
        store.close()
    assert "No two memories say nearly the same thing" not in html
    assert "/memory/tenant-keys" in html and "/memory/tenant-keys-again" in html
    assert "/memory/key-rotation" not in html and "/memory/postgres" not in html
