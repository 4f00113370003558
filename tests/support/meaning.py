"""The real MiniLM model for tests that need meaning: loaded once per module, and every store
of the test using that one model (a load per store would cost the suite seconds). Registered
for the whole suite by tests/conftest.py; a module marks itself with `with_minilm`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from store.search.vector_extra import minilm_installed

if TYPE_CHECKING:  # numpy: only with the vectors or minilm extra
    from store.search.embedders import Model

with_minilm = [
    pytest.mark.skipif(
        not minilm_installed(), reason="the minilm extra (onnxruntime and the model's wheel) is not installed"
    ),
    pytest.mark.usefixtures("meaning_on"),
]


@pytest.fixture(scope="module")
def minilm() -> Model:
    from store.search import onnx_model

    return onnx_model.load_minilm()


@pytest.fixture
def meaning_on(minilm: Model, monkeypatch: pytest.MonkeyPatch) -> None:
    """The vector signal on, every store using the module's one model."""
    from store.search import vectors

    monkeypatch.delenv("ENGRAM_VECTORS", raising=False)
    monkeypatch.setattr(vectors, "load_model", lambda folder, **_: minilm)
