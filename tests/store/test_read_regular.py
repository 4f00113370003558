"""`read_regular` reads from the descriptor itself: whole files of every size, the limit, and
what it refuses (a link, a folder, a FIFO) stay as they were."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from store.errors import NotRegular
from store.files.fsutil import read_regular


@pytest.mark.parametrize("size", [0, 1, 4095, 65536, 65537, 300_000])
def test_a_whole_file_is_read(tmp_path: Path, size: int) -> None:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path = tmp_path / "f.md"
    path.write_bytes(data)
    assert read_regular(path) == data
    assert read_regular(str(path), size) == data
    assert read_regular(path, size + 10) == data


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"y" * 101)
    with pytest.raises(NotRegular):
        read_regular(path, 100)


def test_links_folders_and_fifos_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "t.md"
    target.write_bytes(b"t")
    (tmp_path / "link.md").symlink_to(target)
    os.mkfifo(tmp_path / "fifo.md")
    for name in ("link.md", "fifo.md", "."):
        with pytest.raises(NotRegular):
            read_regular(tmp_path / name, 100)
    assert read_regular(tmp_path / "link.md", follow=True) == b"t"
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "absent.md")
