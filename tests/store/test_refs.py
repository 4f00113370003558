"""store.code.refs: the reference grammar, the language-agnostic definition check, extraction."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.code.refs import defined_names, extract, parse_ref
from tests.support.files import write
from tests.support.gitrepo import commit_all, init


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("def load_config(path):", "load_config"),
        ("    async def fetch(self):", "fetch"),
        ("class InvertedIndex(Base):", "InvertedIndex"),
        ("export default function render() {}", "render"),
        ("export const apiBase = '/v1'", "apiBase"),
        ("func (s *Server) Serve(ctx context.Context) error {", "Serve"),
        ("func main() {", "main"),
        ("pub(crate) async fn run_all() -> Result<()> {", "run_all"),
        ("pub struct Tokenizer {", "Tokenizer"),
        ("interface Props {", "Props"),
        ("type Id = string", "Id"),
        ("MAX_FILE_BYTES: Final = 1024", "MAX_FILE_BYTES"),
        ("TIMEOUT = 5", "TIMEOUT"),
        ("let mut counter = 0;", "counter"),
    ],
)
def test_a_definition_line_defines_its_name(line: str, name: str) -> None:
    """engram's choice: a simple keyword-or-assignment check that works for any language."""
    assert name in defined_names(line + "\n")


@pytest.mark.parametrize("line", ["x == 3", "    return flush()", "# def hidden", "self.value = 3"])
def test_a_use_or_comparison_is_not_a_definition(line: str) -> None:
    """engram's choice: calls, comparisons, comments and attribute assignments define nothing."""
    assert defined_names(line + "\n") == frozenset()


@pytest.mark.parametrize(
    "ref", ["/etc/passwd", "../secret.py", "a/../../b.py", "C:/x.py", "a\\..\\..\\b.py", "", "x.py#1bad"]
)
def test_a_reference_that_could_leave_the_workspace_is_refused(ref: str) -> None:
    """Spec-mandated (a repository is untrusted input): no absolute path, no `..`."""
    assert parse_ref(ref) is None


def test_references_parse_into_path_symbol_and_glob() -> None:
    """SPEC §2: `path`, `path#symbol`, or a glob."""
    assert parse_ref("./store/bm25.py#Index.search") is not None
    parsed = parse_ref("store/bm25.py#InvertedIndex")
    assert parsed is not None and (parsed.path, parsed.symbol, parsed.glob) == (
        "store/bm25.py",
        "InvertedIndex",
        False,
    )
    globbed = parse_ref("tests/**/*.py")
    assert globbed is not None and globbed.glob


@pytest.fixture
def code(tmp_path: Path) -> Path:
    root = init(tmp_path / "code")
    write(root / "store" / "bm25.py", "class InvertedIndex:\n    pass\n\ndef tokenize(text):\n    pass\n")
    write(root / "store" / "catalog.py", "def refresh():\n    pass\n\ndef tokenize(x):\n    pass\n")
    write(root / "web" / "App.tsx", "export function renderApp() {}\n")
    write(root / "untracked.py", "def load_untracked():\n    pass\n")
    commit_all(root, "seed")
    write(root / "untracked.py", "def load_untracked():\n    pass\n")
    (root / "untracked.py").unlink()
    write(root / "later.py", "def load_later():\n    pass\n")  # on disk, not tracked
    return root


def test_extraction_finds_tracked_paths_and_defined_identifiers(code: Path) -> None:
    """Issue 13: code-looking paths that exist, identifiers a tracked file defines."""
    refs = extract(
        code,
        "The InvertedIndex in store/bm25.py",
        "`renderApp` draws it; App.tsx too; see https://example.com/store/catalog.py and missing/file.py.",
    )
    assert sorted(refs) == ["store/bm25.py#InvertedIndex", "web/App.tsx#renderApp"]


def test_an_identifier_defined_in_two_files_needs_the_text_to_name_one(code: Path) -> None:
    """engram's choice: an ambiguous identifier is cited only with the file the text names."""
    assert extract(code, "tokenize", "`tokenize` splits words.") == []
    assert extract(code, "tokenize", "`tokenize` in store/catalog.py splits words.") == [
        "store/catalog.py#tokenize"
    ]


def test_extraction_uses_git_tracked_files_only_where_git_is_there(code: Path, tmp_path: Path) -> None:
    """Issue 13: `git ls-files` where git is there; a walk of the workspace elsewhere."""
    assert extract(code, "later", "`load_later` in later.py") == []
    plain = tmp_path / "plain"
    write(plain / "later.py", "def load_later():\n    pass\n")
    assert extract(plain, "later", "`load_later` lives here") == ["later.py#load_later"]
