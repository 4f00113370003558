"""The vector signal's first build runs off the request path: a search never waits for more
than INLINE_SECONDS of predicted embedding; past it, a builder embeds the backlog in batches and
saves vectors.bin as it goes, and until every memory has its vectors the search answers from
BM25 alone and says how far the build has got (its diagnostics, and status). A server's warm-up
builds; a one-shot process (a CLI read) never starts a build it could not finish: `engram
index` (store.finder.Finder.build_vectors) builds in the foreground.

The model is a fake whose `embed` sleeps, so the build takes seconds on any machine, and whose
vectors are word hashes: a memory shares meaning with a query when it shares words with it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram_mcp.ops import read_ops
from store.search import vector_extra, vectors
from store.search.vector_build import Pace
from store.store import Store
from tests.support.store_helpers import write_memory

pytestmark = pytest.mark.skipif(
    not vector_extra.available("wordllama"),
    reason="the vector libraries (numpy, tokenizers) are not installed",
)

MEMORIES = 1000
DIM = 64


class SlowModel:
    """A model that takes `per_text` seconds a text and predicts about that much."""

    name = "slow"
    fingerprint = "slow;v1"
    dim = DIM
    window_words = 200

    def __init__(self, per_text: float = 0.004) -> None:
        self.per_text = per_text
        self.pace = Pace(per_text / 60)  # a window here is about 60 characters
        self.embedded: list[str] = []
        self.bulk = 0
        """Calls made as a build's batches (which a real model runs on one thread)."""
        self.gate = threading.Event()
        self.gate.set()
        self.lock = threading.Lock()

    def embed(self, texts: list[str], *, bulk: bool = False) -> Any:
        assert self.gate.wait(60)
        if bulk:
            self.bulk += 1
        if len(texts) > 1:  # a query is one text: quick, as a real model's is
            time.sleep(self.per_text * len(texts))
        with self.lock:
            self.embedded.extend(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIM] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out.astype(np.float16).astype(np.float32)


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowModel]:
    monkeypatch.delenv("ENGRAM_VECTORS", raising=False)
    model = SlowModel()
    monkeypatch.setattr(vectors, "load_model", lambda folder, **_: model)
    monkeypatch.setattr(vectors, "SAVE_SECONDS", 0.2)
    yield model
    model.gate.set()


def _fill(root: Path, count: int = MEMORIES) -> None:
    for n in range(count):
        write_memory(
            root, f"note-{n:04d}", title=f"Note {n}", body=f"routine entry number {n} about the weather\n"
        )
    write_memory(
        root, "kettle", title="Kettle descaling", body="Descale the office kettle with vinegar monthly.\n"
    )


def _until_fused(store: Store, query: str, seconds: float = 60.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = store.find(query)
        if result.backends != ("bm25",):
            return result
        time.sleep(0.05)
    raise AssertionError("the build never finished")


def test_a_fresh_1000_memory_store_answers_its_first_search_at_once_while_the_build_runs(
    empty_workspace: Path, slow: SlowModel
) -> None:
    _fill(empty_workspace)
    store = Store(empty_workspace, background=False)  # a CLI process: no warm-up thread
    started = time.perf_counter()
    first = store.find("kettle vinegar")
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0
    assert first.backends == ("bm25",)
    assert first.entries[0].id == "kettle"
    [(code, message)] = first.diagnostics
    assert code == "ENGRAM_VECTORS_BUILDING"
    assert message.startswith("building: ") and "of 1,001 memories embedded" in message
    bm25_alone = Store(empty_workspace, env={"ENGRAM_VECTORS": "0"}).find("kettle vinegar")
    assert [(e.id, e.score) for e in first.entries] == [(e.id, e.score) for e in bm25_alone.entries]

    assert "`engram index` builds the rest now" in message
    status = read_ops.status(store)
    assert status.data["vectors"]["state"] == "building"
    assert "vectors: slow, building: " in status.text and "`engram index`" in status.text
    time.sleep(0.3)
    assert store.find("kettle vinegar").backends == ("bm25",)  # a CLI read built nothing meanwhile
    assert slow.bulk == 0

    told: list[tuple[int, int]] = []
    assert store.finder.build_vectors(lambda done, total: told.append((done, total)))["state"] == "ready"
    assert told and told[-1][1] == 1001 and told == sorted(told)  # the progress bar's steps
    fused = store.find("kettle vinegar")
    assert fused.backends == ("bm25", "vectors:slow")
    assert fused.diagnostics == ()
    assert fused.entries[0].id == "kettle"
    assert len(fused.entries) == 10  # every memory scored: the build was whole when it fused
    assert len(slow.embedded) >= MEMORIES + 1
    assert slow.bulk >= 2  # the backlog went in batches, as bulk embeddings
    done = read_ops.status(store)
    assert done.data["vectors"] == {"state": "ready", "model": "slow", "embedded": 1001, "memories": 1001}
    assert "vectors: slow, ready (1,001 of 1,001 memories embedded)" in done.text
    store.close()
    assert (empty_workspace / ".engram" / "vectors.bin").is_file()


def test_a_process_that_stops_mid_build_leaves_its_progress_and_the_next_one_goes_on_from_it(
    empty_workspace: Path, slow: SlowModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`engram index` stopped (Ctrl-C: the store closes) keeps what it embedded."""
    _fill(empty_workspace)
    first = Store(empty_workspace, background=False)
    assert first.find("kettle").backends == ("bm25",)
    threading.Thread(target=first.finder.build_vectors, args=(lambda done, total: None,), daemon=True).start()
    cache = empty_workspace / ".engram" / "vectors.bin"
    deadline = time.monotonic() + 30
    while len(slow.embedded) < 300 and time.monotonic() < deadline:
        time.sleep(0.02)
    first.close()  # what the CLI does on its way out: the build stops after its batch, saved
    assert first.finder.vector_index()._builder is None  # stopped, not left running into the exit
    assert cache.is_file()
    saved = len({t for t in slow.embedded if "\n" in t})  # memory windows (queries have no title line)
    assert 250 <= saved < MEMORIES
    time.sleep(0.3)
    assert len({t for t in slow.embedded if "\n" in t}) == saved  # and it embeds no more

    fresh = SlowModel()
    monkeypatch.setattr(vectors, "load_model", lambda folder, **_: fresh)
    second = Store(empty_workspace, background=False)
    progress = second.find("kettle").diagnostics
    assert progress and progress[0][0] == "ENGRAM_VECTORS_BUILDING"
    done = int(progress[0][1].removeprefix("building: ").split(" of ")[0].replace(",", ""))
    assert done == saved
    second.finder.build_vectors(lambda done, total: None)
    assert second.find("kettle vinegar").entries[0].id == "kettle"
    assert len([t for t in fresh.embedded if "\n" in t]) == MEMORIES + 1 - saved  # only the rest


def test_the_server_warm_up_builds_while_searches_answer_from_bm25_and_say_so(
    empty_workspace: Path, slow: SlowModel
) -> None:
    _fill(empty_workspace, 300)
    store = Store(empty_workspace)
    warm = threading.Thread(target=store.warm)
    warm.start()
    try:
        deadline = time.monotonic() + 30
        while len(slow.embedded) < 100 and time.monotonic() < deadline:  # the backlog is under way
            time.sleep(0.01)
        during = store.find("kettle vinegar")
        assert during.backends == ("bm25",)
        assert during.entries[0].id == "kettle"
    finally:
        warm.join(60)
    assert not warm.is_alive()
    after = store.find("kettle vinegar")  # the warm-up returns once the build is done
    assert after.backends == ("bm25", "vectors:slow")
    assert after.diagnostics == ()


def test_a_small_change_after_the_build_is_embedded_inline(empty_workspace: Path, slow: SlowModel) -> None:
    _fill(empty_workspace, 200)
    store = Store(empty_workspace, background=False)
    store.finder.build_vectors(lambda done, total: None)
    write_memory(empty_workspace, "teapot", title="Teapot", body="Warm the teapot before brewing.\n")
    result = store.find("teapot brewing")
    assert result.backends == ("bm25", "vectors:slow")
    assert result.entries[0].id == "teapot"
