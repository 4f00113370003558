"""Memory text as HTML that cannot act: markdown rendered with HTML off, then sanitised.

A memory from a clone can carry HTML and script. Two layers stand between it and the page:
markdown-it-py renders CommonMark (and tables) with `html` off, so raw HTML in the text is shown
as text, and its own link check already refuses `javascript:`, `vbscript:`, `file:` and `data:`
links; then nh3 (the Ammonia sanitiser) keeps only `ALLOWED_TAGS`, only `href` on `a`, and an
`href` only when it is an absolute http or https URL, with `rel="noopener noreferrer"`. Before
either, store.safety.untrusted.block escapes the control, bidi and invisible characters that
would make the text read as something it is not. The page's CSP allows no script at all besides.
"""

from __future__ import annotations

from typing import Final

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
    page), and no other attribute at all (Ammonia keeps `lang` and `title` on every tag)."""
    if tag == "a" and attribute == "href" and value.lower().startswith(("http://", "https://")):
        return value
    if tag == "a" and attribute == "rel":  # Ammonia's own: `link_rel` below
        return "noopener noreferrer"
    return None


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
