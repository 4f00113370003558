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
from ipaddress import ip_address
from typing import Final
from urllib.parse import unquote, urlsplit

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

from store.safety import untrusted

BODY_LIMIT: Final = 200_000
"""Characters of a body rendered (as `engram show` prints at most); the cut is named."""
ALLOWED_TAGS: Final = frozenset(
    {
        *("p", "pre", "code", "em", "strong", "ul", "ol", "li", "a", "blockquote", "br", "hr"),
        *("h1", "h2", "h3", "h4", "h5", "h6"),
        *("table", "thead", "tbody", "tr", "th", "td"),
    }
)
ALLOWED_ATTRIBUTES: Final = {"a": {"href"}}
SCHEMES: Final = frozenset({"http", "https"})

_MARKDOWN: Final = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    "table"
)


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
    """`text` (a memory body) as sanitised HTML."""
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
