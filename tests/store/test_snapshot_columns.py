"""index.json's columns and folder stamps: a new process takes the store in without listing or
parsing it when no folder moved, a change since is still seen, and every damaged or foreign
snapshot is refused whole and rebuilt from the files."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import orjson
import pytest

from store.files import sealed
from store.files.memory import Memory
from store.read import catalog
from store.read.freshness import stamps
from store.read.index_file import INDEX_KIND, MAX_INDEX_BYTES
from store.search import bm25
from store.store import Store
from tests.support.store_helpers import count_listings, write_memory

HOUR_AGO = time.time_ns() - 3600 * 10**9


@pytest.fixture(autouse=True)
def trusted_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stamp is worth keeping as soon as it is taken (a folder's ctime, which `_settled` cannot
    set back, is otherwise trusted only 2 s after it moved)."""
    monkeypatch.setattr(stamps, "TRUST_AFTER_NS", 0)


def _settled(workspace: Path) -> None:
    """Every memory file and folder last changed an hour ago, as in a store at rest."""
    for folder in (workspace / ".engram" / "memory", workspace / ".engram" / "working"):
        if folder.is_dir():
            for path in folder.iterdir():
                os.utime(path, ns=(HOUR_AGO, HOUR_AGO))
            os.utime(folder, ns=(HOUR_AGO, HOUR_AGO))


def _indexed(workspace: Path) -> Store:
    """A store whose index.json holds trusted stamps (written by a process that listed it)."""
    _settled(workspace)
    store = Store(workspace)
    store.view()
    store.close()
    data = orjson.loads((workspace / ".engram" / "index.json").read_bytes())
    assert data["stamps"]["durable"][0] == HOUR_AGO
    return store


def test_a_store_at_rest_is_taken_in_from_the_columns_without_a_listing_or_a_parse(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _indexed(workspace)
    listed = count_listings(monkeypatch)
    parsed: list[str] = []
    real_parse = catalog.parse_memory
    monkeypatch.setattr(
        catalog, "parse_memory", lambda *a, **k: parsed.append(k["file_id"]) or real_parse(*a, **k)
    )
    store = Store(workspace, background=False)
    memory = store.view().durable["use-uv-for-python"]
    assert memory._source is not None  # deferred: its record not decoded yet
    assert store.search("uv")[0].id == "use-uv-for-python"
    assert memory.title and memory.tags and memory._source is None  # decoded when first asked
    assert (workspace / ".engram" / "memory") not in listed and parsed == []


def test_a_rename_a_new_file_and_a_removal_since_the_snapshot_are_seen_by_the_first_read(
    workspace: Path,
) -> None:
    _indexed(workspace)
    folder = workspace / ".engram" / "memory"
    source = (folder / "use-uv-for-python.md").read_text()
    (folder / "new.tmp").write_text(source.replace("title: Use uv", "title: Prefer uv"))
    (folder / "new.tmp").rename(folder / "use-uv-for-python.md")
    write_memory(workspace, "pin-the-node-version", title="Pin the node version", body="Use .nvmrc.\n")
    removed = sorted(
        p for p in folder.glob("*.md") if p.stem not in {"use-uv-for-python", "pin-the-node-version"}
    )[0]
    removed.unlink()
    for background in (False, True):
        view = Store(workspace, background=background).view()
        assert view.durable["use-uv-for-python"].title.startswith("Prefer uv")
        assert "pin-the-node-version" in view.durable and removed.stem not in view.durable


def test_an_edit_in_place_since_the_snapshot_is_seen_by_a_one_shot_read(workspace: Path) -> None:
    """The folder's mtime does not move for an edit in place: a command that reads once stats
    every file (a server's sweeper finds it within its first sweep)."""
    _indexed(workspace)
    path = workspace / ".engram" / "memory" / "use-uv-for-python.md"
    data = path.read_bytes()
    with path.open("r+b") as handle:
        handle.write(data.replace(b"title: Use uv", b"title: Use UV"))
        handle.truncate()
    assert Store(workspace, background=False).view().durable["use-uv-for-python"].title.startswith("Use UV")


def test_a_stamp_taken_right_after_a_change_is_not_trusted(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change in the same tick of a coarse clock leaves a folder's mtime as it was: a stamp read
    within TRUST_AFTER_NS of the folder's last change vouches for nothing, so the folder is listed."""
    monkeypatch.setattr(stamps, "TRUST_AFTER_NS", 2_000_000_000)
    os.utime(workspace / ".engram" / "memory")  # the folder changed a moment ago
    store = Store(workspace)
    store.view()
    store.close()
    listed = count_listings(monkeypatch)
    Store(workspace).view()
    assert workspace / ".engram" / "memory" in listed


def test_an_index_copied_from_another_project_is_not_trusted_for_this_one(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same user's key, another folder: the stamps are bound to the scope's path."""
    _indexed(workspace)
    other = tmp_path / "other"
    shutil.copytree(workspace, other)
    write_memory(other, "only-in-the-other", title="Only in the other project")
    _settled(other)
    shutil.copy(workspace / ".engram" / "index.json", other / ".engram" / "index.json")
    listed = count_listings(monkeypatch)
    assert "only-in-the-other" in Store(other).view().durable
    assert other / ".engram" / "memory" in listed


def _seal_as(path: Path, key: bytes, kind: str, payload: bytes) -> None:
    path.write_bytes(
        sealed.seal(key, kind, payload) if kind == INDEX_KIND else sealed.seal_binary(key, kind, payload)
    )


@pytest.mark.parametrize("damage", ["truncated", "forged", "wrong-key", "cross-kind", "oversized", "uneven"])
def test_a_damaged_index_is_refused_whole_and_rebuilt(workspace: Path, damage: str) -> None:
    store = _indexed(workspace)
    path = workspace / ".engram" / "index.json"
    raw = path.read_bytes()
    payload = sealed.unseal(store.key(), INDEX_KIND, raw)
    assert payload is not None
    if damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "forged":  # every memory claimed retired, the tag left as it was
        path.write_bytes(raw.replace(b'"active"', b'"retired"'))
    elif damage == "wrong-key":
        _seal_as(path, b"k" * 32, INDEX_KIND, payload)
    elif damage == "cross-kind":  # a valid tag of this user's engram, for another kind of file
        _seal_as(path, store.key(), "usage", payload)
    elif damage == "oversized":
        with path.open("ab") as handle:
            handle.truncate(MAX_INDEX_BYTES + 1)  # sparse: nothing is written
    else:  # sealed by this key, but its columns do not add up
        data = orjson.loads(payload)
        data["rows"]["hash"] = data["rows"]["hash"][:-1]
        _seal_as(path, store.key(), INDEX_KIND, orjson.dumps(data))
    again = Store(workspace)
    view = again.view()
    assert view.durable["use-uv-for-python"].active
    assert again.search("uv")[0].id == "use-uv-for-python"
    assert [code for code, _ in again.notices() if code in ("ENGRAM_UNTRUSTED", "ENGRAM_CORRUPT")]
    again.close()
    assert sealed.unseal(store.key(), INDEX_KIND, path.read_bytes()) is not None  # rebuilt


@pytest.mark.parametrize("damage", ["truncated", "forged", "wrong-key", "cross-kind", "oversized"])
def test_a_damaged_search_index_is_refused_whole_and_rebuilt(workspace: Path, damage: str) -> None:
    store = _indexed(workspace)
    store.search("uv")
    store.close()
    path = workspace / ".engram" / "search.idx"
    raw = path.read_bytes()
    payload = bytes(sealed.unseal_binary(store.key(), bm25.TAG_KIND, raw))
    if damage == "truncated":
        path.write_bytes(raw[: len(raw) - 9])
    elif damage == "forged":
        path.write_bytes(raw[:-4] + bytes(4))
    elif damage == "wrong-key":
        _seal_as(path, b"k" * 32, bm25.TAG_KIND, payload)
    elif damage == "cross-kind":
        _seal_as(path, store.key(), "vectors", payload)
    else:  # sealed by this key, its sizes claiming more postings than the file holds
        at = len(b"ENGRAM-BM25-5\n")
        size = int.from_bytes(payload[at : at + 8], "little")
        header = orjson.loads(payload[at + 8 : at + 8 + size])
        header["post"] = [count * 1000 for count in header["post"]]
        head = orjson.dumps(header)
        _seal_as(
            path,
            store.key(),
            bm25.TAG_KIND,
            payload[:at] + len(head).to_bytes(8, "little") + head + payload[at + 8 + size :],
        )
    again = Store(workspace)
    assert again.search("uv")[0].id == "use-uv-for-python"
    assert [m for _, m in again.notices() if "search.idx" in m]
    again.close()
    bm25.load_tagged(path, store.key())  # rebuilt, and its tag holds


def test_a_removal_hidden_by_setting_the_folders_mtime_back_is_still_seen(workspace: Path) -> None:
    """`touch -d` or os.utime can put a folder's mtime back, never its ctime: the next process
    lists the folder, so a removed memory is gone and a planted one is seen (and verify says so)."""
    _indexed(workspace)
    folder = workspace / ".engram" / "memory"
    (folder / "use-uv-for-python.md").unlink()
    write_memory(workspace, "planted-by-hand", title="Planted by hand")
    os.utime(folder, ns=(HOUR_AGO, HOUR_AGO))
    view = Store(workspace, background=False).view()
    assert "use-uv-for-python" not in view.durable and "planted-by-hand" in view.durable


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's feed is inotify")
def test_a_memory_folder_swapped_under_a_followed_path_is_listed_again(
    workspace: Path, tmp_path: Path
) -> None:
    """The feed follows a folder, not a path: when `.engram` is a link a checkout retargets (or a
    parent is renamed), the folder now at the path is listed, by the server and by the next
    process, and verify sees what it holds."""
    real = workspace / ".engram"
    (workspace / "store-a").mkdir()
    real.rename(workspace / "store-a" / "engram")
    shutil.copytree(workspace / "store-a" / "engram", workspace / "store-b" / "engram")
    (tmp_path / "scratch").mkdir()
    write_memory(tmp_path / "scratch", "only-in-b", title="Only in b")
    shutil.copy(
        tmp_path / "scratch" / ".engram" / "memory" / "only-in-b.md",
        workspace / "store-b" / "engram" / "memory",
    )
    real.symlink_to(Path("store-a") / "engram")
    _settled(workspace)
    server = Store(workspace)
    assert "only-in-b" not in server.view().durable
    real.unlink()
    real.symlink_to(Path("store-b") / "engram")
    assert "only-in-b" in server.view().durable
    server.close()
    assert "only-in-b" in Store(workspace, background=False).view().durable


@pytest.mark.parametrize(
    "damage", ["a number among the keys", "a key in two rows", "a null type", "stamps as a list"]
)
def test_columns_sealed_with_this_key_but_not_as_engram_writes_them_are_never_half_used(
    workspace: Path, damage: str
) -> None:
    """Only engram holds the key, but a file it did not write that way is listed, never trusted:
    no crash, and no memory shown with another's fields."""
    store = _indexed(workspace)
    path = workspace / ".engram" / "index.json"
    data = orjson.loads(sealed.unseal(store.key(), INDEX_KIND, path.read_bytes()) or b"")
    rows = data["rows"]
    uv = rows["key"].index("durable/use-uv-for-python")
    other = 1 if uv != 1 else 2
    if damage == "a number among the keys":
        rows["key"][other] = 7
    elif damage == "a key in two rows":
        rows["key"][other] = rows["key"][uv]
    elif damage == "a null type":
        rows["type"][uv] = None
    else:
        data["stamps"] = list(data["stamps"].values())
    _seal_as(path, store.key(), INDEX_KIND, orjson.dumps(data))
    view = Store(workspace, background=False).view()
    assert view.durable["use-uv-for-python"].title.startswith("Use uv")
    assert {p.stem for p in (workspace / ".engram" / "memory").glob("*.md")} <= set(view.durable)


def test_a_deferred_memory_filled_by_another_thread_meanwhile_still_answers(workspace: Path) -> None:
    """Two threads may ask a deferred memory for a field at once: the one that finds the record
    decoded by the other (its source cleared) reads the field, never an AttributeError."""
    _indexed(workspace)
    memory = Store(workspace, background=False).view().durable["use-uv-for-python"]
    source = memory._source
    assert source is not None
    memory._fill(source)  # the other thread's work, done while this one was on its way in
    assert memory._source is None
    assert Memory.__getattr__(memory, "title").startswith("Use uv")
    with pytest.raises(AttributeError):
        Memory.__getattr__(memory, "no_such_field")


@pytest.mark.parametrize("background", [False, True])
def test_a_retargeted_memory_link_shows_the_new_files_never_the_old_records(
    workspace: Path, background: bool
) -> None:
    """`.engram/memory` a link a pull retargets to a folder whose file has the same name, size
    and mtime (git writes both in one clock tick): that file is another inode, so it is read, and
    verify reports it instead of vouching for it with the old file's record."""
    from store.write import review

    engram = workspace / ".engram"
    for side, title in (("a", "Title AAAA"), ("b", "Title BBBB")):
        (engram / f"mem-{side}").mkdir()
        text = (engram / "memory" / "use-uv-for-python.md").read_text()
        (engram / f"mem-{side}" / "use-uv-for-python.md").write_text(
            text.replace("title: Use uv", f"title: {title}", 1)
        )
        os.utime(engram / f"mem-{side}" / "use-uv-for-python.md", ns=(HOUR_AGO, HOUR_AGO))
    shutil.rmtree(engram / "memory")
    (engram / "memory").symlink_to("mem-a")
    store = Store(workspace, background=False)
    review.accept(store)
    store.close()
    assert review.verify(Store(workspace, background=False))["ok"]
    (engram / "memory").unlink()
    (engram / "memory").symlink_to("mem-b")
    again = Store(workspace, background=background)
    assert again.view().durable["use-uv-for-python"].title.startswith("Title BBBB")
    report = review.verify(again)
    assert "use-uv-for-python" in str(report["mismatched"])
    again.close()
