"""Memory text as HTML that cannot act: markdown rendered with HTML off, then sanitised.

A memory from a clone can carry HTML and script. Two layers stand between it and the page:
markdown-it-py renders CommonMark (and tables) with `html` off, so raw HTML in the text is shown
as text, and its own link check already refuses `javascript:`, `vbscript:`, `file:` and `data:`
links; then nh3 (the Ammonia sanitiser) keeps only `ALLOWED_TAGS`, only `href` on `a`, and an
`href` only when it is an absolute http or https URL to a host that is not this machine (a
loopback link would get the page's cookie: `_this_machine`), with `rel="noopener noreferrer"`. Before
either, store.safety.untrusted.block escapes the control, bidi and invisible characters that
would make the text read as something it is not. The page's CSP allows no script at all besides.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from ipaddress import ip_address
from typing import Final
from urllib.parse import unquote, urlsplit

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup

from store.safety import untrusted

RENDER_LIMIT: Final = 20_000
"""Characters of a body rendered as markdown; a longer one is shown as text."""
BODY_LIMIT: Final = 200_000
"""Characters of a body rendered (as `engram show` prints at most); the cut is named."""
ALLOWED_TAGS: Final = frozenset(
    {
        *("p", "pre", "code", "em", "strong", "ul", "ol", "li", "a", "blockquote", "br", "hr"),
        *("h1", "h2", "h3", "h4", "h5", "h6"),
        *("table", "thead", "tbody", "tr", "th", "td"),
    }
)
LINK_LIMIT: Final = 2000
"""Characters of a link's target and title, or an image's, shown after it."""
ALLOWED_ATTRIBUTES: Final = {"a": {"href"}}
SCHEMES: Final = frozenset({"http", "https"})

_MARKDOWN: Final = (
    MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    .enable("table")
    .disable("entity")
)
"""No character references decoded (`&#x202E;` stays those eight characters): the escaping of
invisible characters runs on the text before markdown, so a decoded one would get past it."""


def _image(renderer: object, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """An image as text naming it: the page loads nothing from elsewhere, and nh3 would drop the
    tag, alt text and all, hiding text that is in the memory."""
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    return escapeHtml(untrusted.line(f"[image: {alt} → {token.attrGet('src') or ''}]", LINK_LIMIT))


def _link_close(
    renderer: object, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A link's target after its text, so the page shows where a link goes (and its title)."""
    opening = next(t for t in reversed(tokens[:idx]) if t.type == "link_open")
    href, title = str(opening.attrGet("href") or ""), str(opening.attrGet("title") or "")
    said = f" ({href}{' “' + title + '”' if title else ''})"
    return "</a>" + escapeHtml(untrusted.line(said, LINK_LIMIT))  # a title's references are decoded


_MARKDOWN.add_render_rule("image", _image)
_MARKDOWN.add_render_rule("link_close", _link_close)


def hides_text(text: str) -> bool:
    """Whether the rendered view of `text` leaves out text that is in it: link reference
    definitions (`[//]: # (…)`, the markdown comment, is one)."""
    env: dict[str, object] = {}
    _MARKDOWN.parse(text, env)
    return bool(env.get("references"))


def _href(tag: str, attribute: str, value: str) -> str | None:
    """Keep an `href` on `a` only when it is an absolute http(s) URL (no relative path of this
    page) to a host that is not this machine, and no other attribute at all (Ammonia keeps
    `lang` and `title` on every tag)."""
    if tag == "a" and attribute == "href" and value.lower().startswith(("http://", "https://")):
        return None if _this_machine(value) else value
    if tag == "a" and attribute == "rel":  # Ammonia's own: `link_rel` below
        return "noopener noreferrer"
    return None


def _this_machine(url: str) -> bool:
    """A link to a loopback host: browsers send the page's cookie to every port of 127.0.0.1, and
    a click from the page is a same-site navigation, so a memory's link to another local port
    would hand the cookie to whatever listens there. Such a link is shown as text. The host is
    read as a browser reads it (percent-decoded, width-folded, an IPv4 address in any of the
    forms the URL standard accepts: `127.1`, `2130706433`, `0x7f.0.0.1`)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return True  # a URL Python cannot split is not linked either
    host = unicodedata.normalize("NFKC", unquote(host)).rstrip(".").lower()
    if host in ("", "localhost") or host.endswith(".localhost"):
        return True
    try:
        return ip_address(host).is_loopback or ip_address(host).is_unspecified
    except ValueError:
        pass
    number = _ipv4(host)
    return number is not None and (number >> 24 == 127 or number == 0)


def _ipv4(host: str) -> int | None:
    """The address of an IPv4 host in the URL standard's forms (None: not one)."""
    parts = host.split(".")
    if not parts or len(parts) > 4:
        return None
    numbers = []
    for part in parts:
        base = 10
        if part[:2] == "0x":
            part, base = part[2:] or "0", 16
        elif len(part) > 1 and part[0] == "0":
            part, base = part[1:], 8
        try:
            numbers.append(int(part, base))
        except ValueError:
            return None
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for n, part_value in enumerate(head):
        value += part_value << (8 * (3 - n))
    return value


def markdown(text: str, limit: int = BODY_LIMIT) -> Markup:
    """`text` (a memory body) as sanitised HTML; over RENDER_LIMIT characters, as text (markdown
    costs up to a tenth of a millisecond a character on hostile input such as `![![![…`)."""
    if len(text) > RENDER_LIMIT:
        shown = escapeHtml(untrusted.block(text, limit))
        note = f"Over {RENDER_LIMIT:,} characters, so shown as text, not rendered."
        return Markup(f'<p class="hint">{note}</p><pre>{shown}</pre>')  # noqa: S704 — escaped just above
    html = _MARKDOWN.render(untrusted.block(text, limit))
    clean = nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(SCHEMES),
        link_rel="noopener noreferrer",
        strip_comments=True,
        attribute_filter=_href,
    )
    return Markup(clean)  # noqa: S704 — sanitised by nh3 just above
