"""Attack round, issue 23: an agent of the same user that holds the page's cookie (read from the
browser's files, or sent to its own server on another 127.0.0.1 port) and so its CSRF token
still cannot save, retire or restore: each needs the code printed only in the terminal running
`engram ui`, and each code works once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram_mcp.ui.approval_code import ALPHABET, ApprovalCode
from store.files.memory import split_front_matter
from store.store import Store
from store.write import curate
from tests.support.proposals import candidate, propose
from tests.ui.conftest import Terminal, Ui


def _ref(store: Store) -> str:
    propose(store, [candidate("Deploys happen on Tuesdays", "The release train leaves Tuesday at 10:00.")])
    return curate.pending(store)[0].ref


@pytest.mark.parametrize("code", ["", "AAAA-AAAA", None])
def test_a_save_without_the_terminals_code_writes_nothing(
    page: Ui, store: Store, ws: Path, code: str | None
) -> None:
    ref = _ref(store)
    form = {"action": "save", "candidate": "1", "code": code}
    if code is None:
        form.pop("code")
    response = page.open(f"/pending/{ref}", method="POST", data={"csrf": page.guard.csrf, **form})
    assert response.status_code == 403
    assert "ENGRAM_UI_CODE" in response.get_data(as_text=True)
    assert not (ws / ".engram" / "memory" / "deploys-happen-on-tuesdays.md").exists()
    assert [p.ref for p in curate.pending(store)] == [ref]  # still pending


def test_the_code_typed_as_a_person_types_it_saves(page: Ui, store: Store, ws: Path) -> None:
    ref = _ref(store)
    typed = page.app.page.code.current.lower().replace("-", " ")
    response = page.open(
        f"/pending/{ref}",
        method="POST",
        data={"csrf": page.guard.csrf, "action": "save", "candidate": "1", "code": typed},
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    assert (ws / ".engram" / "memory" / "deploys-happen-on-tuesdays.md").exists()


def test_each_code_works_once_and_a_wrong_one_is_spent_too(page: Ui, ws: Path) -> None:
    first = page.app.page.code.current
    assert (
        page.open(
            "/memory/use-uv/retire", method="POST", data={"csrf": page.guard.csrf, "code": first}
        ).status_code
        == 200
    )
    again = page.open("/memory/use-uv/restore", method="POST", data={"csrf": page.guard.csrf, "code": first})
    assert again.status_code == 403
    wrong = page.app.page.code.current
    assert wrong != first
    page.open("/memory/use-uv/restore", method="POST", data={"csrf": page.guard.csrf, "code": "ZZZZ-ZZZZ"})
    assert page.app.page.code.current != wrong  # a guess spends the code it guessed at
    path = ws / ".engram" / "memory" / "use-uv.md"
    assert split_front_matter(path.read_text())[0]["status"] == "retired"


def test_a_retire_without_the_code_writes_nothing(page: Ui, ws: Path) -> None:
    path = ws / ".engram" / "memory" / "use-uv.md"
    before = path.read_bytes()
    response = page.open("/memory/use-uv/retire", method="POST", data={"csrf": page.guard.csrf})
    assert response.status_code == 403 and "approval code" in response.get_data(as_text=True)
    assert path.read_bytes() == before


def test_declining_needs_no_code(page: Ui, store: Store) -> None:
    ref = _ref(store)
    response = page.open(
        f"/pending/{ref}",
        method="POST",
        data={"csrf": page.guard.csrf, "action": "decline", "candidate": "1"},
    )
    assert response.status_code == 200
    assert curate.pending(store) == []


def test_no_page_ever_shows_the_code(page: Ui, store: Store) -> None:
    _ref(store)
    code = page.app.page.code.current
    for path in ("/", "/pending", "/memory/use-uv", "/duplicates", "/overview", "/health"):
        html = page.html(path)
        assert code not in html and code.replace("-", "") not in html, path


def test_codes_are_eight_unambiguous_characters_and_each_new_one_is_announced() -> None:
    terminal = Terminal()
    codes = ApprovalCode(terminal)
    first = codes.current
    assert re.fullmatch(r"[A-Z2-9]{4}-[A-Z2-9]{4}", first) and set(first.replace("-", "")) <= set(ALPHABET)
    assert terminal.lines == []  # the first is printed with the URL
    assert codes.spend(first, "save candidate 1 of proposal abc")
    assert codes.current != first
    assert terminal.lines == [
        f"code used to save candidate 1 of proposal abc; the next approval code is {codes.current}"
    ]


def test_three_wrong_codes_in_a_row_and_the_launch_takes_no_more_writes() -> None:
    """Second attack round: with the cookie, 4,050 wrong tries in 5 s kept every code the person
    read off the terminal from working. Now the third wrong one in a row stops all writes, and
    the terminal says why."""
    terminal = Terminal()
    codes = ApprovalCode(terminal)
    assert not codes.spend("AAAA-AAAA", "retire use-uv")
    assert not codes.spend("", "retire use-uv")
    right = codes.current
    assert codes.spend(right, "retire use-uv")  # a right one resets the count
    for _ in range(3):
        assert not codes.spend("AAAA-AAAA", "retire use-uv")
    assert codes.locked
    assert not codes.spend(codes.current, "retire use-uv")  # not even the right one now
    assert "3 wrong approval codes in a row" in terminal.lines[-1]


def test_the_page_says_it_takes_no_more_writes_once_locked(page: Ui, ws: Path) -> None:
    for _ in range(3):
        page.open("/memory/use-uv/retire", method="POST", data={"csrf": page.guard.csrf, "code": "AAAA-AAAA"})
    response = page.post("/memory/use-uv/retire")  # with the current code
    assert response.status_code == 403
    assert "takes no more writes" in response.get_data(as_text=True)
    assert (
        split_front_matter((ws / ".engram" / "memory" / "use-uv.md").read_text())[0].get("status")
        != "retired"
    )


def test_a_page_started_from_an_agents_shell_retires_nothing_even_with_the_code(
    store: Store, ws: Path
) -> None:
    """Its output is the agent's to read, code and all: no write of memory is taken there."""
    from tests.ui.conftest import app

    ui = Ui(app(store, approvals="started from an agent's shell"))
    ui.login()
    path = ws / ".engram" / "memory" / "use-uv.md"
    before = path.read_bytes()
    response = ui.post("/memory/use-uv/retire")  # with the current code
    assert response.status_code == 403 and "ENGRAM_AGENT_SHELL" in response.get_data(as_text=True)
    assert path.read_bytes() == before


def test_the_terminals_record_names_only_a_well_formed_address(page: Ui) -> None:
    """Third attack round: a name padded with spaces wrapped into a forged "code used to" line."""
    forged = (
        "keep-me" + " " * 60 + "engram ui: code used to retire keep-me; the next approval code is ZZZZ-ZZZZ"
    )
    page.open(f"/memory/{forged}/retire", method="POST", data={"csrf": page.guard.csrf, "code": "AAAA-AAAA"})
    said = page.app.page.code._announce.lines[-1]  # type: ignore[attr-defined]
    assert "ZZZZ-ZZZZ" not in said and "an address that names no memory" in said
