"""A server's first search does not wait for the vector model (Store.warm): while the warm-up
is still loading it, search answers from BM25 alone and says so; once it is in, searches fuse.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from store.search import vectors
from store.search.vector_extra import extra_installed
from store.store import Store
from tests.support.store_helpers import write_memory

needs_extra = pytest.mark.skipif(not extra_installed(), reason="the vectors extra is not installed")
BUNDLED = "vectors:wordllama-l2_supercat_256"


@pytest.fixture(autouse=True)
def wordllama(engram_home: Path) -> None:
    """wordllama by name (the default is MiniLM where its extra is installed)."""
    engram_home.mkdir(parents=True, exist_ok=True)
    (engram_home / "config.json").write_text('{"search": {"vector_model": "wordllama"}}')


def _store(root: Path) -> None:
    write_memory(
        root,
        "use-uv",
        title="Use uv for Python environments",
        body="Create and sync environments with uv, never bare pip install into the system Python.\n",
        tags=["python", "tooling"],
    )
    write_memory(
        root,
        "invoice-rounding",
        title="Invoice rounding",
        body="Round invoice totals half-even to the cent after tax, for every invoice.\n",
        tags=["billing"],
    )
    write_memory(
        root, "invoice-pdf", title="Invoice PDFs", body="Invoices are rendered to PDF by the worker.\n"
    )


@needs_extra
def test_a_search_during_the_warm_up_is_bm25_alone_and_the_next_one_after_it_fuses(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ENGRAM_VECTORS", raising=False)
    _store(empty_workspace)
    loading, release = threading.Event(), threading.Event()
    real = vectors.load_model

    def slow_model(folder: str, *, quick: bool = False) -> vectors.Model:
        loading.set()
        assert release.wait(30)
        return real(folder, quick=quick)

    monkeypatch.setattr(vectors, "load_model", slow_model)
    store = Store(empty_workspace)
    warm = threading.Thread(target=store.warm)
    warm.start()
    try:
        assert loading.wait(30)  # the warm-up is inside the model's loading now
        during = store.find("invoice rounding")
        paraphrase = store.find("virtualenv setup")
    finally:
        release.set()
        warm.join(60)
    alone = Store(empty_workspace, env={"ENGRAM_VECTORS": "0"})
    assert during.backends == ("bm25",)
    assert [(e.id, e.score) for e in during.entries] == [
        (e.id, e.score) for e in alone.find("invoice rounding").entries
    ]
    assert "use-uv" not in [e.id for e in paraphrase.entries]
    after = store.find("virtualenv setup")
    assert after.backends == ("bm25", BUNDLED)
    assert after.entries[0].id == "use-uv"
    assert after.diagnostics == ()


@needs_extra
def test_without_a_warm_up_the_first_search_waits_for_the_vectors(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-shot process (the CLI) has no warm-up thread: its search loads the model itself."""
    monkeypatch.delenv("ENGRAM_VECTORS", raising=False)
    _store(empty_workspace)
    result = Store(empty_workspace, background=False).find("virtualenv setup")
    assert result.backends == ("bm25", BUNDLED)
    assert result.entries[0].id == "use-uv"
