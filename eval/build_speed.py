"""The vector build's speed against the model's own: `make eval` prints the ratio per set.

`build` is a fresh store's first embedding of every memory, as `engram index` runs it (the
store opened, its model loaded, then the build timed alone). `raw` is the same windows through
the same model in one call of its build path (tokenise, sort by length, batch), with nothing of
the index around it: the model's own throughput on this machine. The ratio is what the index
adds; the target is at most 1.3.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from store.store import Store


def measure(workspace: Path, home: Path, env: dict[str, str]) -> dict[str, Any]:
    from store.search.embedders import windows  # seam: numpy and tokenizers, only when measured

    store = Store(workspace, env={**env, "ENGRAM_HOME": str(home)}, background=False)
    loading = time.perf_counter()
    state = store.finder.vector_state()  # loads the model; the memories wait for their vectors
    loaded = time.perf_counter() - loading
    if state["state"] != "building":
        return {"skipped": f"vector state {state['state']}, not a fresh build"}
    started = time.perf_counter()
    done = store.finder.build_vectors(lambda embedded, total: None)
    build = time.perf_counter() - started
    model = store.finder.vector_index()._model  # the tool measures the model the build used
    assert model is not None and done["state"] == "ready"
    texts = [text for memory in store.view().everything() for text in windows(memory, model.window_words)]
    started = time.perf_counter()
    model.embed(texts, bulk=True)
    raw = time.perf_counter() - started
    store.close()
    return {
        "model": done["model"],
        "memories": done["memories"],
        "windows": len(texts),
        "model_load_s": round(loaded, 2),
        "build_s": round(build, 2),
        "raw_s": round(raw, 2),
        "windows_per_s_raw": round(len(texts) / raw, 1),
        "ratio": round(build / raw, 2),
    }


def line(name: str, figures: dict[str, Any]) -> str:
    if "skipped" in figures:
        return f"vector build {name}: {figures['skipped']}"
    return (
        f"vector build {name}: {figures['memories']} memories, {figures['windows']} windows: "
        f"build {figures['build_s']:.2f} s, the model alone {figures['raw_s']:.2f} s "
        f"({figures['windows_per_s_raw']:.0f} windows/s), ratio {figures['ratio']:.2f} (target ≤ 1.3); "
        f"model load {figures['model_load_s']:.2f} s"
    )
