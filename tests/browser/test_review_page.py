"""`engram ui` in a real browser (issue 23): the human approves two of three candidates,
declines the third, searches, opens a stale memory and its history, retires and restores it;
a `<script>` planted in a memory from a clone never runs. With ENGRAM_SCREENSHOTS=1 the pending
view and the memory view are saved to docs/screenshots/ (the README shows them)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page

from engram_mcp.cli.main import main
from store.store import Store
from tests.browser.conftest import Ui
from tests.support import terminal
from tests.support.paths import ENGRAM, REPO
from tests.support.proposals import candidate, propose
from tests.support.store_helpers import write_memory

PLANTED = (
    "---\nid: planted-page\ntype: fact\ntitle: 'Planted <script>window.__pwned = 1</script>'\n---\n"
    'Hello <script>window.__pwned = 2</script> <img src="x" onerror="window.__pwned = 3">\n\n'
    "[click](javascript:window.__pwned=4)\n"
)
SHOTS = REPO / "docs" / "screenshots"


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engram_home: Path) -> Path:
    """A git project: a billing memory citing src/billing.py (committed, then the file is
    deleted: stale), and a memory planted by hand with script in its title and body."""
    engram_home.mkdir(parents=True, exist_ok=True)
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "billing.py").write_text("def charge():\n    return 1\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "billing")
    monkeypatch.chdir(root)
    assert main(["init"]) == 0
    body = "Billing starts in `src/billing.py`; charge() rounds half up to the cent."
    assert main(["add", "fact", "Billing entry point", body, "--yes"]) == 0
    (root / ".engram" / "memory" / "planted-page.md").write_text(PLANTED)
    assert main(["verify", "--accept"]) in (0, 1)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "memories")
    (root / "src" / "billing.py").unlink()
    _git(root, "commit", "-qam", "drop billing.py")
    return root


@pytest.fixture
def ui(project: Path) -> Iterator[Ui]:
    """`engram ui` in a terminal of its own, as the human starts it (from an agent's shell the
    page would not approve)."""
    running = Ui(project, popen=terminal.popen)
    try:
        yield running
    finally:
        running.stop()


def _shoot(page: Page, name: str) -> None:
    if os.environ.get("ENGRAM_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / name), full_page=True)


def _no_dialogs(page: Page) -> list[str]:
    """Every alert, confirm or prompt a page opens (a planted script's `alert(1)`)."""
    seen: list[str] = []

    def opened(dialog: Dialog) -> None:
        seen.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", opened)
    return seen


def test_two_of_three_saved_one_declined(ui: Ui, page: Page, project: Path) -> None:
    store = Store(project)
    try:
        propose(
            store,
            [
                candidate("Deploys happen on Tuesdays", "The release train leaves Tuesday at 10:00 UTC."),
                candidate("The staging database is shared", "Never run destructive migrations on staging."),
                candidate("Invoices are PDFs", "Invoice exports are rendered as PDF/A-3."),
            ],
        )
    finally:
        store.close()
    page.goto(ui.url)
    page.click("text=Pending")
    assert page.locator('input[name="candidate"]').count() == 3
    _shoot(page, "pending.png")
    page.check('input[name="candidate"][value="1"]')
    page.check('input[name="candidate"][value="3"]')
    page.fill('input[name="code"]', ui.code())  # read off the terminal running `engram ui`
    page.click('button[value="save"]')
    assert "Saved 2 memories" in page.content()
    page.goto(ui.origin + "/pending")
    assert page.locator('input[name="candidate"]').count() == 1
    page.check('input[name="candidate"][value="2"]')
    page.click('button[value="decline"]')
    page.goto(ui.origin + "/pending")
    assert page.locator('input[name="candidate"]').count() == 0
    saved = sorted(p.name for p in (project / ".engram" / "memory").glob("*.md"))
    assert "deploys-happen-on-tuesdays.md" in saved and "invoices-are-pdfs.md" in saved
    assert "the-staging-database-is-shared.md" not in saved
    done = subprocess.run([ENGRAM, "verify"], cwd=project, capture_output=True, text=True)
    assert "Edited outside engram" not in done.stdout


def test_search_open_a_stale_memory_and_its_history_retire_and_restore(ui: Ui, page: Page) -> None:
    page.goto(ui.url)
    page.fill('input[name="q"]', "billing charge")
    page.click('form.filters button[type="submit"]')
    page.click("text=Billing entry point")
    text = page.inner_text("main")
    assert "stale" in text and "src/billing.py" in text
    assert "drop billing.py" in text or "memories" in text  # its git history
    _shoot(page, "memory.png")
    memory_page = page.url
    page.fill('form.actions input[name="code"]', ui.code())
    page.click('form.actions button:has-text("Retire")')
    assert "retired" in page.inner_text("main").lower()
    page.goto(memory_page)
    assert "retired" in page.inner_text("p.meta")
    page.fill('form.actions input[name="code"]', ui.code())
    page.click('form.actions button:has-text("Restore")')
    page.goto(memory_page)
    assert "active" in page.inner_text("p.meta")
    assert page.locator('form.actions button:has-text("Retire")').count() == 1


def test_a_planted_script_never_runs(ui: Ui, page: Page) -> None:
    dialogs = _no_dialogs(page)
    page.goto(ui.url)
    for path in ("/memory/planted-page", "/", "/?q=planted"):
        page.goto(ui.origin + path)  # each page's own window: the script would have run here
        assert "Planted" in page.inner_text("main")
        assert page.evaluate("typeof window.__pwned") == "undefined", path
    links = page.locator('a[href^="javascript:"]').count()
    assert links == 0 and dialogs == []


def test_a_near_duplicate_pair_is_merged_then_the_other_retired(ui: Ui, page: Page, project: Path) -> None:
    """Two memories written by hand (as a teammate's commit brings them; `engram add` would have
    judged the second an UPDATE of the first), accepted, then found as a pair."""
    tax = "Round the tax on each invoice line before summing the lines, never on the total."
    write_memory(
        project,
        "tax-per-line",
        title="Tax is rounded per invoice line",
        body=tax + " Totals show two decimals.\n",
    )
    extra = tax + "\n\nThe Stripe webhook replays use the same rounding helper.\n"
    write_memory(project, "line-tax-rounding", title="Tax rounded per invoice line", body=extra)
    assert main(["verify", "--accept"]) in (0, 1)
    page.goto(ui.url)
    page.goto(ui.origin + "/duplicates")
    page.wait_for_selector('button:has-text("Propose a merge")', timeout=20_000)  # it reloads itself
    page.click('button:has-text("Propose a merge")')
    assert "Proposed merging" in page.inner_text("main")
    page.goto(ui.origin + "/pending")
    assert "Stripe webhook replays" in page.inner_text("main")
    page.check('input[name="candidate"][value="1"]')
    page.fill('input[name="code"]', ui.code())
    page.click('button[value="save"]')
    assert "Saved 1 memory" in page.content()
    page.goto(ui.origin + "/duplicates")
    page.wait_for_selector("text=words alone do not tell", timeout=20_000)  # read both, then retire
    page.goto(ui.origin + "/memory/line-tax-rounding")
    page.fill('form.actions input[name="code"]', ui.code())
    page.click('form.actions button:has-text("Retire")')
    assert "Retired" in page.inner_text("main")
    page.goto(ui.origin + "/overview")
    assert page.locator("svg.chart").count() == 2
    _shoot(page, "overview.png")
