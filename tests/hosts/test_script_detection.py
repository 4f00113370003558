"""Whether a host entry's command is engram's console script is read from bounded parts of the
file it names: its head (a POSIX script's text) and its tail (a Windows `.exe` launcher keeps
its script in a zip appended at the end). A host config may name any file."""

from __future__ import annotations

from pathlib import Path

from engram_mcp.hosts.link import launch


def _script(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "bin" / "engram-mcp"
    path.parent.mkdir()
    path.write_bytes(data)
    path.chmod(0o755)
    return path


def test_a_posix_script_naming_engram_mcp_is_ours(tmp_path: Path) -> None:
    path = _script(tmp_path, b"#!/usr/bin/python3\nfrom engram_mcp.mcp.server import main\nmain()\n")
    assert launch.is_ours(str(path))


def test_a_launcher_with_the_script_at_its_end_is_ours(tmp_path: Path) -> None:
    """The .exe shape: a program of its own first, the script last."""
    path = _script(
        tmp_path, b"MZ" + b"\0" * 300_000 + b"PK\3\4__main__.py from engram_mcp.mcp.server import main"
    )
    assert launch.is_ours(str(path))


def test_another_program_named_engram_mcp_is_not_ours(tmp_path: Path) -> None:
    path = _script(tmp_path, b"#!/bin/sh\nexec npx -y engram-mcp\n")
    assert not launch.is_ours(str(path))


def test_a_huge_file_is_read_in_bounded_parts(tmp_path: Path) -> None:
    """A sparse 8 GiB file named as the command: answered without reading it whole (reading it
    whole was a MemoryError, or minutes of reading zeros)."""
    path = _script(tmp_path, b"")
    with path.open("r+b") as file:
        file.truncate(8 << 30)
    assert not launch.is_ours(str(path))
