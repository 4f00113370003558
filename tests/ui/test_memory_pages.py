"""Memory, at a glance (issue 23, Build 4): the list and its filters, the search, one memory's
page (body, front matter, refs, history), retire and restore, and planted markup that never runs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from store.files.memory import render_memory, split_front_matter
from store.store import Store
from tests.support.gitrepo import commit_all, init
from tests.support.store_helpers import write_memory
from tests.ui.conftest import Ui, app

HOSTILE_TITLE = "<script>alert(1)</script> <img src=x onerror=alert(2)>"
HOSTILE_BODY = (
    "<script>alert(1)</script>\n\n"
    "<img src=x onerror=alert(2)>\n\n"
    "[click](javascript:alert(3)) [also](JAVASCRIPT:alert(4)) [rel](/memory/use-uv/retire)\n\n"
    '<a href="javascript:alert(5)">raw</a> <iframe src="http://evil.example"></iframe>\n\n'
    "![pic](http://evil.example/x.png) [fine](https://example.com/docs)\n\n"
    "```\n</pre><script>alert(6)</script>\n```\n\n"
    "Right\u202eto left\n"
)


class _Tags(HTMLParser):
    """Every element the browser would build from a page, with its attributes."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))


def _links(html: str) -> list[str]:
    return [attrs["href"] for tag, attrs in _Tags(html).tags if tag == "a" and "href" in attrs]


def _live(html: str) -> list[str]:
    """What in `html` would run or load: script or frame elements, event-handler attributes,
    script URLs, images of elsewhere."""
    found = []
    for tag, attrs in _Tags(html).tags:
        if tag in ("script", "iframe", "object", "embed", "img", "base", "meta") and not (
            tag == "meta" and set(attrs) <= {"charset", "name", "content"}
        ):
            found.append(tag)
        found += [f"{tag}[{name}]" for name in attrs if name.startswith("on")]
        found += [
            f"{tag}[{name}={value}]"
            for name, value in attrs.items()
            if name in ("href", "src", "action", "formaction")
            and re.sub(r"[\x00-\x20]", "", value).lower().startswith(("javascript:", "data:", "vbscript:"))
        ]
    return found


# --- the list ------------------------------------------------------------------------------------


def test_the_list_shows_the_active_memories_by_default(page: Ui) -> None:
    html = page.html("/")
    assert "Use uv for installs" in html and "Tax is rounded per line" in html
    assert "The old port" not in html  # retired
    assert "2 memories" in html
    assert 'href="/memory/use-uv"' in html


@pytest.mark.parametrize(
    ("query", "shown", "hidden"),
    [
        ("status=retired", ["The old port"], ["Use uv"]),
        ("status=all", ["The old port", "Use uv", "Tax is rounded"], []),
        ("type=decision", ["Tax is rounded"], ["Use uv"]),
        ("type=fact&type=decision", ["Tax is rounded", "Use uv"], ["The old port"]),
        ("tag=python", ["Use uv"], ["Tax is rounded"]),
        ("scope=user", [], ["Use uv", "Tax is rounded"]),
        ("scope=project", ["Use uv", "Tax is rounded"], []),
        ("status=nonsense&type=nonsense", ["Use uv", "Tax is rounded"], ["The old port"]),
    ],
)
def test_the_filters_are_query_parameters(page: Ui, query: str, shown: list[str], hidden: list[str]) -> None:
    html = page.html(f"/?{query}")
    for title in shown:
        assert title in html, title
    for title in hidden:
        assert title not in html.split("<table", 1)[-1] if "<table" in html else True, title


def test_the_search_uses_engrams_own_ranking(page: Ui, store: Store) -> None:
    html = page.html("/?q=rounded+line")
    assert "Tax is rounded per line" in html and "Use uv for installs" not in html
    expected = store.find("rounded line").entries
    assert [e.id for e in expected] == ["tax-rounding"]
    assert f"{expected[0].score:.2f}" in html
    assert "bm25" in html


def test_a_search_with_no_hit_says_so(page: Ui) -> None:
    assert "No memory matches" in page.html("/?q=zyzzyva")


def test_marks_stale_expired_and_never_fetched(ws: Path, page: Ui) -> None:
    """The list marks a memory whose ref broke (what `engram stale` says), one past its
    valid_until, and the ones never fetched."""
    write_memory(ws, "gone-soon", title="Gone soon", body="x\n", valid_until="2001-01-01")
    html = page.html("/?status=all")
    assert "stale: api/tax.py renamed or deleted" in html
    assert "expired 2001-01-01" in html
    assert "never fetched" in html
    (ws / "api").mkdir()
    (ws / "api" / "tax.py").write_text("def tax(): ...\n")
    assert "stale:" not in page.html("/")


def test_an_expired_memory_is_listed_under_expired_only(ws: Path, page: Ui) -> None:
    write_memory(ws, "gone-soon", title="Gone soon", body="x\n", valid_until="2001-01-01")
    assert "Gone soon" not in page.html("/")
    assert "Gone soon" in page.html("/?status=expired")
    assert "Gone soon" in page.html("/memory/gone-soon")


# --- one memory ------------------------------------------------------------------------------------


def test_a_memory_page_shows_body_front_matter_and_refs(page: Ui) -> None:
    html = page.html("/memory/tax-rounding")
    assert "<strong>each line</strong>" in html  # markdown rendered
    assert "decision" in html and "refs" in html
    assert "api/tax.py" in html and "renamed or deleted" in html
    text = page.html("/memory/tax-rounding?as=text")
    assert "**each line**" in text and "<strong>" not in text


@pytest.mark.parametrize("name", ["Not_An_Id", "..%2F..%2Fetc", "a" * 65, "user:..", "note:-x", "-x"])
def test_an_id_is_checked_as_the_cli_checks_it(page: Ui, name: str) -> None:
    response = page.get(f"/memory/{name}")
    assert response.status_code in (400, 404)
    assert "ENGRAM_VALIDATION" in response.get_data(as_text=True) or response.status_code == 404


def test_an_unknown_memory_is_not_found(page: Ui) -> None:
    response = page.get("/memory/no-such-memory")
    assert response.status_code == 404
    assert "ENGRAM_NOT_FOUND" in response.get_data(as_text=True)


def test_a_user_memory_has_its_own_address(page: Ui, store: Store) -> None:
    store.user.memory_dir.mkdir(parents=True)
    front = {"id": "my-editor", "type": "preference", "title": "I use helix"}
    (store.user.memory_dir / "my-editor.md").write_bytes(render_memory(front, "hx\n"))
    html = page.html("/?scope=user")
    assert 'href="/memory/user:my-editor"' in html
    assert "I use helix" in page.html("/memory/user:my-editor")
    assert page.get("/memory/my-editor").status_code == 404


def test_the_history_shows_commits_and_their_diffs(ws: Path, page: Ui) -> None:
    """What `engram history ID` lists, with each commit's diff, escaped in <pre>."""
    init(ws)
    commit_all(ws, "first <b>commit</b>")
    path = ws / ".engram" / "memory" / "use-uv.md"
    path.write_text(path.read_text().replace("Run `uv pip install`.", "Run `uv sync` <script>x</script>."))
    commit_all(ws, "second")
    html = page.html("/memory/use-uv")
    assert html.count('<details class="commit"') == 2
    assert "first &lt;b&gt;commit&lt;/b&gt;" in html
    assert "+Run `uv sync` &lt;script&gt;x&lt;/script&gt;." in html
    assert "-Run `uv pip install`." in html
    assert "<script>" not in html


def test_outside_git_the_history_says_so(page: Ui) -> None:
    assert "not a git repository" in page.html("/memory/use-uv")


def test_a_repository_without_a_commit_of_the_file_says_so(ws: Path, page: Ui) -> None:
    init(ws)
    html = page.html("/memory/use-uv")
    assert "no commit holds this file yet" in html and "not a git repository" not in html


# --- planted markup ------------------------------------------------------------------------------------


def test_planted_script_and_links_render_with_none_of_it_live(ws: Path, page: Ui) -> None:
    """Issue 23: a memory from a clone can carry HTML and script; on the page none of it is
    live: no <script, no event handler, no javascript: href, no iframe or image of elsewhere."""
    write_memory(
        ws, "hostile", title=HOSTILE_TITLE, body=HOSTILE_BODY, tags=["<b>x</b>"], owner="<i>me</i>\u202eevil"
    )
    for path in ("/", "/?q=alert", "/memory/hostile", "/memory/hostile?as=text", "/health"):
        html = page.html(path)
        assert _live(html) == [], path
        assert "<script" not in html.lower(), path  # not even as a tag the parser would skip
    html = page.html("/memory/hostile")
    body = html.split('<div class="markdown">', 1)[1].split("</div>", 1)[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body  # the body's HTML shown as text
    assert "&lt;iframe" in body
    assert 'href="https://example.com/docs" rel="noopener noreferrer"' in html
    assert "/memory/use-uv/retire" not in _links(html)  # a body links only to http(s) URLs
    assert "\u202e" not in html and "\\u202e" in html  # a bidi override is shown, never applied


# --- retire and restore -------------------------------------------------------------------------------


def test_retire_and_restore_write_as_engram_forget_and_restore_do(ws: Path, page: Ui) -> None:
    path = ws / ".engram" / "memory" / "use-uv.md"
    response = page.post("/memory/use-uv/retire")
    assert response.status_code == 200
    assert "Retired use-uv (.engram/memory/use-uv.md)" in response.get_data(as_text=True)
    assert split_front_matter(path.read_text())[0]["status"] == "retired"
    assert "Use uv for installs" not in page.html("/")
    assert "Restore" in page.html("/memory/use-uv")
    response = page.post("/memory/use-uv/restore")
    assert "Restored use-uv" in response.get_data(as_text=True)
    assert split_front_matter(path.read_text())[0]["status"] == "active"
    assert "already active" not in response.get_data(as_text=True)
    again = page.post("/memory/use-uv/restore").get_data(as_text=True)
    assert "active already; nothing changed" in again


def test_retire_and_restore_keep_verify_clean(page: Ui, store: Store) -> None:
    """Sealed like the CLI's writes: verify does not report the page's own write as an edit."""
    from store.write import review

    review.accept(store)
    page.post("/memory/use-uv/retire")
    page.post("/memory/use-uv/restore")
    assert review.verify(store)["mismatched"] == []


def test_retiring_an_unknown_memory_writes_nothing(page: Ui) -> None:
    response = page.post("/memory/no-such/retire")
    assert response.status_code == 404
    assert "ENGRAM_NOT_FOUND" in response.get_data(as_text=True)


# --- a large store ---------------------------------------------------------------------------------------


def test_the_first_page_of_a_10000_memory_store_lists_its_first_hundred(tmp_path: Path) -> None:
    """Issue 23: a 10,000-memory store's first page is one page of 100, not the whole store (its
    speed, under a second, is `make bench`'s `ui_first_page`, not a timed test)."""
    root = tmp_path / "big"
    for n in range(10_000):
        write_memory(root, f"memory-{n:05d}", title=f"Memory number {n}", body=f"Body {n} of the store.\n")
    opened = Store(root, background=False)
    try:
        ui = Ui(app(opened))
        ui.login()
        html = ui.html("/")
    finally:
        opened.close()
    assert "10000 memories, page 1 of 100" in html
    assert html.count('href="/memory/memory-') == 100


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9999/steal",
        "http://localhost:3000/",
        "http://[::1]:8080/",
        "http://127.1:9999/",
        "http://2130706433:9999/",
        "http://0x7f.0.0.1:9999/",
        "http://%31%32%37.0.0.1:9999/",
        "http://\uff11\uff12\uff17.0.0.1:9999/",
        "http://app.localhost:9999/",
        "http://1%C2%AD27.0.0.1:9999/",  # second attack round: IDNA drops a soft hyphen,
        "http://1%E2%80%8B27.0.0.1:9999/",  # a zero-width space,
        "http://127%E3%80%820%E3%80%820%E3%80%821:9999/",  # maps U+3002 to a dot,
        "http://loc%C2%ADalhost:9999/",
        "http://a@127.0.0.1:9999/",
        "https://xn--8g7ccp.xn--7g7c.xn--7g7c.xn--8g7c:9999/",  # fullwidth 127.0.0.1 in punycode
        "<http://1%C2%AD27.0.0.1:9999/>",
    ],
)
def test_a_memorys_link_to_this_machine_is_text_not_a_link(ws: Path, page: Ui, url: str) -> None:
    """Browsers send the page's cookie to every port of 127.0.0.1, and a click from the page is a
    same-site navigation: a clone's link to another local port would hand the cookie over."""
    link = url if url.startswith("<") else f"[the docs]({url})"
    body = f"See {link} for the docs and [elsewhere](https://example.com/).\n"
    write_memory(ws, "local-link", title="Docs", body=body)
    html = page.html("/memory/local-link")
    assert _links(html).count("https://example.com/") == 1
    assert not [link for link in _links(html) if "9999" in link or "3000" in link or "8080" in link]
    assert "the docs" in html


def test_a_read_only_store_refuses_the_write_with_its_code(ws: Path) -> None:
    """ENGRAM_READ_ONLY=1: the page shows everything, and a retire is refused with the store's
    code, nothing written."""
    opened = Store(ws, read_only=True, background=False)
    try:
        ui = Ui(app(opened))
        ui.login()
        response = ui.post("/memory/use-uv/retire")
        assert response.status_code == 409
        assert "ENGRAM_READ_ONLY" in response.get_data(as_text=True)
    finally:
        opened.close()
    assert "status: retired" not in (ws / ".engram" / "memory" / "use-uv.md").read_text()
