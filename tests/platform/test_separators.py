"""`\\` in refs and `paths:` globs (issue 22, Build 6): a memory written on Windows means the
same on every platform, and no spelling of a path leads out of the workspace on any of them.

The modules are found in today's layout or in ab538aa's (tests/platform/layouts.py), so these
tests run on the code before issue 22 and fail there by what it does."""

from __future__ import annotations

import io
import json
import ntpath
import posixpath
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram_mcp.ops.hook import session_start
from tests.platform.layouts import engram, first, git, memory_file


def parse_ref(text: str) -> object:
    return first("store.refs", "store.code.refs").parse_ref(text)


def glob_match(path: str, pattern: str) -> bool:
    found: bool = first("store.route", "store.code.globs").glob_match(path, pattern)
    return found


@pytest.mark.parametrize(
    ("written", "path", "symbol"),
    [
        ("src\\app.py", "src/app.py", ""),
        ("src\\app.py#main", "src/app.py", "main"),
        ("src\\app.py:10", "src/app.py", ""),
        ("src/app.py:10-12#main", "src/app.py", "main"),
        (".\\src\\app.py", "src/app.py", ""),
    ],
)
def test_a_backslash_ref_names_the_same_file_as_its_slash_spelling(
    written: str, path: str, symbol: str
) -> None:
    """engram's choice (issue 22): `\\` is a folder separator in a ref on every platform, and a
    `:LINE` cites the file."""
    parsed = parse_ref(written)
    assert parsed is not None, written
    assert (parsed.path, parsed.symbol, parsed.text) == (path, symbol, written)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "written",
    [
        "..\\..\\etc\\passwd",
        "src\\..\\..\\x.py",
        "\\etc\\passwd",
        "\\\\server\\share\\x.py",
        "C:\\Windows\\win.ini",
        "c:x.py",
        "src\\D:x.py",
        "src/app.py:stream",
        ".. \\x.py",
        "src/... /x.py",
        "src\\.\\..\\x.py",
    ],
)
def test_no_spelling_of_a_ref_leaves_the_workspace(written: str) -> None:
    """Spec-mandated (a repository is untrusted input), on every platform: `..`, a root, a share,
    a drive, another `:` (a drive or a stream on Windows), a name Windows shortens to `..`."""
    assert parse_ref(written) is None


def _windows_names(path: str) -> list[str]:
    """What Windows makes of each name: trailing dots and spaces dropped."""
    return [part.rstrip(". ") or part for part in path.split("/")]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab./\\: C", min_size=1, max_size=12))
def test_an_accepted_ref_stays_in_the_workspace_in_both_path_flavours(written: str) -> None:
    """Whatever a clone writes: a ref parse_ref accepts, joined to the workspace the way Windows
    and POSIX join and normalise paths, stays inside the workspace."""
    parsed = parse_ref(written)
    if parsed is None:
        return
    path: str = parsed.path  # type: ignore[attr-defined]
    windows_root = PureWindowsPath("C:/ws")
    joined = ntpath.normpath(str(windows_root.joinpath(*_windows_names(path))))
    assert PureWindowsPath(joined).is_relative_to(windows_root), (written, joined)
    posix_root = PurePosixPath("/ws")
    joined = posixpath.normpath(str(posix_root.joinpath(*path.split("/"))))
    assert PurePosixPath(joined).is_relative_to(posix_root), (written, joined)


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        ("src\\app.py", "src/**"),
        ("src/app.py", "src\\**"),
        ("src\\web\\app.ts", "src\\**\\*.ts"),
        ("src/billing/tax.py", "src\\billing\\*.py"),
    ],
)
def test_a_backslash_glob_or_path_matches_as_its_slash_spelling(path: str, pattern: str) -> None:
    """engram's choice (issue 22): `\\` separates folders in `paths:` globs and in the path
    matched, so `src\\**` written on Windows routes `src/app.py` on Linux."""
    assert glob_match(path, pattern)
    assert not glob_match(path.replace("src", "lib"), pattern)


def test_a_task_naming_a_windows_path_names_it_with_slashes() -> None:
    """A task written on Windows (`fix src\\billing\\tax.py`) names the path a `paths:` glob
    matches, not only its file name."""
    named = first("store.route", "store.read.route").named_paths(
        "fix the rounding in src\\billing\\tax.py today"
    )
    assert named == ["src/billing/tax.py"]


def _stale(capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert engram(["stale", "--json"]) in (0, 1)
    rows = json.loads(capsys.readouterr().out)["data"]["stale"]
    return [m["reason"] for row in rows for m in row.get("marks", [])]


def test_a_backslash_ref_is_checked_against_the_working_tree_like_its_slash_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A memory citing `src\\app.py#main` (written on Windows) is not stale while src/app.py
    defines main, and is once main is gone: it names the file, on Linux too."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("def main():\n    pass\n", "utf-8")
    monkeypatch.chdir(repo)
    assert engram(["init"]) == 0
    memory_file(
        repo, "entry-point", {"title": "The entry point", "refs": ["src\\app.py#main", "src\\app.py:1"]}
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "seed")
    assert _stale(capsys) == []
    (repo / "src" / "app.py").write_text("def other():\n    pass\n", "utf-8")
    assert _stale(capsys) == ["main no longer defined in src/app.py"]


def test_a_changed_file_routes_memories_whose_backslash_paths_and_refs_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session start: a rule with `paths: [billing\\**]` and a fact citing `ledger\\book.py:3`
    reach the session's bodies when git reports billing/tax.py and ledger/book.py changed, in a
    store too large to be loaded whole."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "Initial commit")
    monkeypatch.chdir(repo)
    assert engram(["init"]) == 0
    filler = " ".join(f"word{n}" for n in range(90))
    for n in range(60):
        memory_file(repo, f"filler-{n:02d}", {"title": f"Warehouse shelf {n} layout"}, filler)
    memory_file(
        repo, "money-in-cents", {"type": "rule", "title": "Money is integer cents", "paths": ["billing\\**"]}
    )
    memory_file(repo, "ledger-fact", {"title": "The ledger module", "refs": ["ledger\\book.py:3"]})
    for name in ("billing/tax.py", "ledger/book.py"):
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text("A = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Start the modules")
    (repo / "billing" / "tax.py").write_text("A = 2\n")
    (repo / "ledger" / "book.py").write_text("A = 2\n")
    out = io.StringIO()
    assert session_start(None, stdin=io.StringIO(""), out=out) == 0
    text = out.getvalue()
    assert text.startswith("engram: routed by"), text[:300]
    assert "Title: Money is integer cents" in text and "Title: The ledger module" in text, text
