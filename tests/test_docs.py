"""The README is a front page and every page it leads to is there: each relative link of
README.md, SECURITY.md, CONTRIBUTING.md and docs/*.md names a file that exists, and each
`#anchor` a heading of that file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(
    [ROOT / "README.md", ROOT / "SECURITY.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")]
)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors for the headings of `page`."""
    found = set()
    for line in page.read_text("utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_the_readme_is_a_front_page() -> None:
    text = (ROOT / "README.md").read_text("utf-8")
    assert len(text.splitlines()) <= 300
    assert "## Quick start" in text and "make test" in text


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text("utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(target)
    assert broken == []
