"""Hand edits picked up live, and `verify` against the recorded hashes (SPEC §2)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from store.read.index_file import INDEX_VERSION
from store.store import Store
from store.write import review
from tests.support.store_helpers import write_memory

MEMORY = Path(".engram") / "memory"


def _append(path: Path, text: str) -> None:
    with path.open("ab") as handle:
        handle.write(text.encode())


def test_a_hand_edit_is_seen_by_the_same_store_without_restart(workspace: Path) -> None:
    """The same Store object finds a word added to a file after its first read."""
    store = Store(workspace)
    assert store.search("xylophonist") == []
    _append(workspace / MEMORY / "use-uv-for-python.md", "A xylophonist wrote this line.\n")
    assert [e.id for e in store.search("xylophonist")] == ["use-uv-for-python"]


def test_verify_reports_a_hand_edit_after_accept_as_mismatched(workspace: Path) -> None:
    """accept() records hashes; a later edit is listed in `mismatched`."""
    store = Store(workspace)
    review.accept(store)
    clean = review.verify(store)
    assert clean["ok"] and clean["mismatched"] == [] and clean["unindexed"] == [] and clean["missing"] == []
    _append(workspace / MEMORY / "use-uv-for-python.md", "Hand edited.\n")
    report = review.verify(store)
    assert report["mismatched"] == ["use-uv-for-python"]
    assert report["ok"] is False


def test_verify_reports_a_deleted_file_as_missing(workspace: Path) -> None:
    """A recorded file that vanished is listed in `missing`."""
    store = Store(workspace)
    review.accept(store)
    (workspace / MEMORY / "cut-a-release.md").unlink()
    report = review.verify(Store(workspace))
    assert report["missing"] == ["cut-a-release"]
    assert report["ok"] is False


def test_verify_reports_a_new_file_as_unindexed(workspace: Path) -> None:
    """A file added by hand after accept() is listed in `unindexed`."""
    store = Store(workspace)
    review.accept(store)
    write_memory(workspace, "added-by-hand", title="Added by hand")
    report = review.verify(store)
    assert report["unindexed"] == ["added-by-hand"]
    assert report["mismatched"] == [] and report["missing"] == []


def test_user_scope_entries_carry_a_prefix(workspace: Path, engram_home: Path) -> None:
    """User-scope files are reported as `user:<id>`."""
    store = Store(workspace)
    review.accept(store)
    _append(engram_home / "memory" / "editor-is-neovim.md", "Edited.\n")
    assert review.verify(store)["mismatched"] == ["user:editor-is-neovim"]


def test_accept_clears_every_finding(workspace: Path) -> None:
    """After edit, delete and add, accept() leaves verify clean."""
    store = Store(workspace)
    review.accept(store)
    _append(workspace / MEMORY / "use-uv-for-python.md", "Edited.\n")
    (workspace / MEMORY / "cut-a-release.md").unlink()
    write_memory(workspace, "added-by-hand", title="Added by hand")
    assert not review.verify(store)["ok"]
    review.accept(store)
    report = review.verify(store)
    assert report["ok"] is True
    assert report["mismatched"] == report["missing"] == report["unindexed"] == []
    assert report["checked"] == 41 + 3 + 6  # 41 project files (one gone, one added), 3 notes, 6 user


def test_a_corrupt_index_is_rebuilt_without_error(workspace: Path) -> None:
    """Garbage in index.json does not break reads; the next refresh rewrites it."""
    index = workspace / ".engram" / "index.json"
    index.write_bytes(b"{not json at all")
    store = Store(workspace)
    assert store.search("uv")
    assert Store(workspace).search("uv")
    data = orjson.loads(index.read_bytes())
    assert data["version"] == INDEX_VERSION
    assert "durable/use-uv-for-python" in data["rows"]["key"]


def test_a_corrupt_memory_is_a_problem_and_the_rest_still_load(workspace: Path) -> None:
    """One broken file is reported by name; every other memory is still served."""
    (workspace / MEMORY / "cut-a-release.md").write_bytes(b"---\ntype: [unclosed\n---\nbody\n")
    store = Store(workspace)
    view = store.view()
    assert [p.file for p in view.problems] == [".engram/memory/cut-a-release.md"]
    assert view.problems[0].code == "ENGRAM_CORRUPT"
    assert "cut-a-release" not in view.durable
    assert "use-uv-for-python" in view.durable
    assert len([m for m in view.durable.values() if m.scope == "project"]) == 40  # 41 minus the broken one
    assert review.verify(store)["ok"] is False
    assert str(workspace) not in view.problems[0].message


def test_a_symlink_in_memory_is_refused(workspace: Path, tmp_path: Path) -> None:
    """A symbolic link is not followed; it is reported and skipped."""
    target = tmp_path / "outside.md"
    target.write_bytes(
        (workspace / MEMORY / "use-uv-for-python.md")
        .read_bytes()
        .replace(b"id: use-uv-for-python", b"id: linked")
    )
    os.symlink(target, workspace / MEMORY / "linked.md")
    view = Store(workspace).view()
    assert "linked" not in view.durable
    problems = {p.file: p for p in view.problems}
    assert problems[".engram/memory/linked.md"].code == "ENGRAM_REFUSED"


def test_a_file_name_that_is_not_an_id_is_skipped_with_a_problem(workspace: Path) -> None:
    """`Bad_Name.md` is not loaded and is reported."""
    source = (workspace / MEMORY / "use-uv-for-python.md").read_bytes()
    (workspace / MEMORY / "Bad_Name.md").write_bytes(source.replace(b"id: use-uv-for-python\n", b""))
    view = Store(workspace).view()
    problems = {p.file: p for p in view.problems}
    assert problems[".engram/memory/Bad_Name.md"].code == "ENGRAM_VALIDATION"
    assert all(m.id != "Bad_Name" for m in view.durable.values())


def test_an_index_from_the_previous_engram_version_keeps_its_seals(workspace: Path) -> None:
    """After an upgrade that changed the record layout, files are parsed again, nothing is
    reported as corrupt, and verify still knows every accepted memory (no one re-reviews)."""
    from store.files import sealed
    from store.read.index_file import INDEX_KIND

    store = Store(workspace)
    review.accept(store)
    store.close()
    index = workspace / ".engram" / "index.json"
    data = orjson.loads(sealed.unseal(store.key(), INDEX_KIND, index.read_bytes()) or b"")
    data["version"] = 5  # records as objects, in the layout before refs, updated, review_after…
    rows = data.pop("rows")
    records = {
        key: {"sealed": rows["sealed"][n], "r": orjson.loads(rows["r"][n])}
        for n, key in enumerate(rows["key"])
    }
    data["memories"] = {key: {**record, "r": record["r"][:11]} for key, record in records.items()}
    index.write_bytes(sealed.seal(store.key(), INDEX_KIND, orjson.dumps(data)))
    again = Store(workspace)
    report = review.verify(again)
    assert report["ok"] and report["mismatched"] == report["unindexed"] == report["missing"] == []
    assert [e.id for e in again.search("uv")][:1] == ["use-uv-for-python"]
    assert not [n for n in again.notices() if n[0] == "ENGRAM_CORRUPT"]
