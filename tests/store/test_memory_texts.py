"""A memory's front matter and body, read after it was indexed, are the text it was indexed
with or nothing: never another version's fields (a file edited, then put back, as a checkout
and a checkout back do), never a file outside the workspace through a link, never a FIFO's
wait. Found by an attack on the texts kept between reads (store/files/text_cache.py)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from store.files.text_cache import TEXTS
from store.store import Store

X = "---\nid: m\ntype: fact\ntitle: Deploy\nalways: false\n---\nRun make deploy.\n"
Y = "---\nid: m\ntype: fact\ntitle: Deploy\nalways: true\nroles: [ops]\n---\nRun make deploy, as ops.\n"


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Store, Path]:
    workspace = tmp_path / "w"
    workspace.mkdir()
    store = Store(workspace, background=False)
    store.init()
    path = workspace / ".engram" / "memory" / "m.md"
    path.write_text(X)
    TEXTS.clear()
    return store, path


def test_a_file_changed_and_put_back_never_answers_the_other_version(indexed: tuple[Store, Path]) -> None:
    store, path = indexed
    old = store.view(sweep=True).durable["m"]
    path.write_text(Y)  # a checkout, before the catalog notices; a read still holds `old`
    assert "roles" not in old.meta  # not Y's fields under X's hash
    assert old.body == "Run make deploy.\n"  # the body it was indexed with (held since the parse)
    path.write_text(X)  # and back again
    os.utime(path, ns=(1, 10**18))
    again = store.view(sweep=True).durable["m"]
    assert again.hash == old.hash
    assert again.meta.get("always") is False and "roles" not in again.meta
    assert again.body == "Run make deploy.\n"


def test_a_link_or_a_fifo_put_in_a_memory_s_place_is_never_read(
    indexed: tuple[Store, Path], tmp_path: Path
) -> None:
    store, path = indexed
    memory = store.view(sweep=True).durable["m"]
    TEXTS.clear()
    outside = tmp_path / "outside.yaml"
    outside.write_text("---\nk: v\n---\nTOP SECRET OUTSIDE THE WORKSPACE\n")
    path.unlink()
    path.symlink_to(outside)
    assert memory.body == "" and "k" not in memory.meta
    path.unlink()
    os.mkfifo(path)
    TEXTS.clear()
    done: list[str] = []
    reader = threading.Thread(target=lambda: done.append(memory.body), daemon=True)
    reader.start()
    reader.join(5)
    assert done == [""]
