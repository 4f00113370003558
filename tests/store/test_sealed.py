"""The one sealed-file layout (store.files.sealed): what it accepts, what it refuses, and that the
derived files an earlier engram sealed in other layouts are rebuilt without a word to the user."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import orjson
import pytest

from store.errors import Untrusted
from store.files import sealed
from store.search import bm25
from store.store import Store

KEY = b"k" * 32


def test_an_object_stays_json_and_its_tag_covers_the_payload_as_written() -> None:
    payload = orjson.dumps({"version": 1, "memories": {"a": "b"}})
    data = sealed.seal(KEY, "index", payload)
    assert orjson.loads(data) == {
        "_tag": sealed.tag(KEY, "index", payload),
        "version": 1,
        "memories": {"a": "b"},
    }
    assert sealed.load_object(KEY, "index", data) == {"version": 1, "memories": {"a": "b"}}
    assert sealed.unseal(KEY, "index", data) == payload
    assert sealed.load_object(KEY, "index", sealed.seal(KEY, "index", b"{}")) == {}


def test_a_binary_payload_follows_a_one_line_json_header() -> None:
    payload = bytes(range(256)) * 3
    data = sealed.seal_binary(KEY, "search.idx", payload)
    head, _, rest = data.partition(b"\n")
    assert orjson.loads(head) == {"_tag": sealed.tag(KEY, "search.idx", payload)} and rest == payload
    assert bytes(sealed.unseal_binary(KEY, "search.idx", data)) == payload
    assert bytes(sealed.unseal_binary(KEY, "search.idx", data, piece=7)) == payload  # pieces


@pytest.mark.parametrize("damage", ["other key", "other kind", "truncated", "one bit", "bare", "empty"])
def test_anything_but_this_users_seal_is_untrusted(damage: str) -> None:
    payload = b"\x00payload" * 100
    data = sealed.seal_binary(KEY, "vectors", payload)
    key, kind = KEY, "vectors"
    if damage == "other key":
        key = b"x" * 32
    elif damage == "other kind":
        kind = "search.idx"
    elif damage == "truncated":
        data = data[:-5]
    elif damage == "one bit":
        data = data[:100] + bytes([data[100] ^ 1]) + data[101:]
    elif damage == "bare":
        data = payload
    else:
        data = b""
    with pytest.raises(Untrusted) as refused:
        sealed.unseal_binary(key, kind, data)
    assert not refused.value.stale


def test_a_tag_anyone_can_compute_is_not_a_seal() -> None:
    payload = b'{"a":1}'
    planted = b'{"_tag":"' + hashlib.sha256(payload).hexdigest().encode() + b'","a":1}'
    with pytest.raises(Untrusted):
        sealed.load_object(KEY, "usage", planted)
    assert sealed.unseal(KEY, "usage", planted) is None


def _earlier_layouts(key: bytes, body: bytes) -> dict[str, bytes]:
    def old_tag(kind: str, data: bytes) -> bytes:
        return hmac.new(key, kind.encode() + b"\0" + data, hashlib.sha256).hexdigest().encode()

    return {
        "search.idx": body + b"\nENGRAM-TAG " + old_tag("search.idx", body),
        "vectors.bin": b"ENGRAM-VEC-1\n" + old_tag("vectors", body) + b"\n" + body,
    }


def test_the_layouts_an_earlier_engram_wrote_are_stale_not_untrusted() -> None:
    for kind, data in zip(("search.idx", "vectors"), _earlier_layouts(KEY, b"old").values(), strict=True):
        with pytest.raises(Untrusted) as refused:
            sealed.unseal_binary(KEY, kind, data)
        assert refused.value.stale


def test_a_file_that_only_looks_like_an_earlier_layout_is_untrusted() -> None:
    """A planted file must not pass for an upgrade's leftovers (they are rebuilt with no
    notice): the earlier layout counts only with its own tag, this user's, for its own kind."""
    for kind, data in zip(
        ("search.idx", "vectors"), _earlier_layouts(b"another user", b"x").values(), strict=True
    ):
        with pytest.raises(Untrusted) as refused:
            sealed.unseal_binary(KEY, kind, data)
        assert not refused.value.stale
    planted = [b"junk" + b"\nENGRAM-TAG " + b"0" * 64, b"ENGRAM-VEC-1\n" + b"0" * 64 + b"\njunk"]
    for kind, data in zip(("search.idx", "vectors"), planted, strict=True):
        with pytest.raises(Untrusted) as refused:
            sealed.unseal_binary(KEY, kind, data)
        assert not refused.value.stale
    crossed = _earlier_layouts(KEY, b"old")
    for kind, data in (("vectors", crossed["search.idx"]), ("search.idx", crossed["vectors.bin"])):
        with pytest.raises(Untrusted) as refused:
            sealed.unseal_binary(KEY, kind, data)
        assert not refused.value.stale
    with pytest.raises(Untrusted) as refused:
        sealed.load_object(KEY, "usage", crossed["search.idx"])
    assert not refused.value.stale


def test_a_search_index_an_earlier_engram_sealed_is_rebuilt_quietly(workspace: Path) -> None:
    """After an upgrade, the old search index is derived data to rebuild: no notice."""
    store = Store(workspace)
    store.search("uv")
    store.close()
    cache = workspace / ".engram" / "search.idx"
    body = bytes(sealed.unseal_binary(store.key(), bm25.TAG_KIND, cache.read_bytes()))
    cache.write_bytes(_earlier_layouts(store.key(), body)["search.idx"])
    again = Store(workspace)
    assert again.search("uv")[0].id == "use-uv-for-python"
    assert not [m for _, m in again.notices() if "search.idx" in m]
    again.close()
    assert bytes(sealed.unseal_binary(store.key(), bm25.TAG_KIND, cache.read_bytes())) == body


def test_a_mapped_index_is_checked_without_a_copy_and_refused_when_forged(tmp_path: Path) -> None:
    path = tmp_path / "search.idx"
    payload = b"p" * (3 * (1 << 12) + 5)
    path.write_bytes(sealed.seal_binary(KEY, "search.idx", payload))
    view = sealed.map_binary(path, KEY, "search.idx", piece=1 << 12)
    assert isinstance(view, memoryview) and bytes(view) == payload
    path.write_bytes(sealed.seal_binary(b"y" * 32, "search.idx", payload))
    with pytest.raises(Untrusted):
        sealed.map_binary(path, KEY, "search.idx")
    path.write_bytes(b"")
    with pytest.raises(Untrusted):
        sealed.map_binary(path, KEY, "search.idx")
