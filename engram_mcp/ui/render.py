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

import html
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
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
    return _as_text(f"[image: {alt} → {_target(token)}]")


def _fence(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A fenced block with its info string shown above it (the default renderer keeps only a
    class from it, which the sanitiser drops)."""
    info = tokens[idx].info.strip()
    shown = f"<p><code>{_as_text(info)}</code></p>" if info else ""
    return shown + renderer.fence(tokens, idx, options, env)


def _link_close(
    renderer: object, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A link's target after its text, so the page shows where a link goes (and its title)."""
    opening = next(t for t in reversed(tokens[:idx]) if t.type == "link_open")
    return f"</a>{_as_text(f' ({_target(opening)})')}"


def _target(token: Token) -> str:
    """A link's or an image's target, and its title when it has one."""
    target = str(token.attrGet("href") or token.attrGet("src") or "")
    title = str(token.attrGet("title") or "")
    return f"{target} “{title}”" if title else target


def _as_text(said: str) -> str:
    """Text the page adds from a memory's markdown (a target, a title, an info string) as HTML
    text: escaped like the body (markdown decodes a title's references), then for HTML."""
    return escapeHtml(untrusted.line(said, LINK_LIMIT))


_MARKDOWN.add_render_rule("image", _image)
_MARKDOWN.add_render_rule("link_close", _link_close)
_MARKDOWN.add_render_rule("fence", _fence)


def hides_text(text: str, rendered: Markup) -> bool:
    """Whether `rendered` (the page's rendering of `text`) leaves out a word that is in `text`:
    a link reference definition (`[//]: # (…)`, the markdown comment, is one), a table cell past
    the header's columns, or any other construct that renders to nothing. Words are counted,
    case-folded: a comment whose every word the visible sentence also holds still hides them
    (`[//]: # (pipe curl to sh)` above "Never pipe curl to sh").

    The words the page adds itself (an autolink's target shown again after it, the `image`
    label) are not counted as shown, or a hidden comment's words put in a URL would pass; the
    numbers of an ordered list, which the page shows as list marks, are not counted as source.
    Any link reference definition counts as hidden whatever its words: its target is shown after
    each use, so repeated uses would otherwise cover a comment's words in another order."""
    block = untrusted.block(text, BODY_LIMIT)
    env: dict[str, Any] = {}
    tokens = _MARKDOWN.parse(block, env)
    if env.get("references"):
        return True
    added, marks = _page_own_words(tokens)
    shown = Counter(_words(html.unescape(_TAG.sub(" ", str(rendered))))) - added
    source = Counter(_words(block)) - marks
    return any(count > shown[word] for word, count in source.items())


def _page_own_words(tokens: list[Token]) -> tuple[Counter[str], Counter[str]]:
    """(words the rendering adds, ordered-list numbers it shows as marks) for a parse."""
    added: Counter[str] = Counter()
    marks: Counter[str] = Counter()
    pending = list(tokens)
    while pending:
        token = pending.pop()
        pending.extend(token.children or [])
        if token.type == "link_open" and token.markup == "autolink":
            added.update(_words(str(token.attrGet("href") or "")))
        elif token.type == "image":
            added.update(["image"])
        elif token.type == "list_item_open" and token.info:
            marks.update(_words(token.info))
    return added, marks


def _words(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


_WORD: Final = re.compile(r"[^\W_]+")
_TAG: Final = re.compile(r"<[^>]*>")


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
    """Whether a link may lead to this machine, and so is shown as text: browsers send the page's
    cookie to every port of 127.0.0.1, and a click from the page is a same-site navigation, so a
    memory's link to another local port would hand the cookie to whatever listens there.

    Only a host of plain ASCII letters, digits, dots and hyphens is linked at all: a browser maps
    a host's other characters (percent-encoded or not) through IDNA, where a soft hyphen or a
    zero-width space vanishes and an ideographic full stop becomes a dot, so `1%C2%AD27.0.0.1` is
    127.0.0.1 to it. Of the plain ones, `localhost`, `*.localhost` and every IPv4 form the URL
    standard reads (`127.1`, `2130706433`, `0x7f.0.0.1`) of 127.0.0.0/8 or 0 are not linked."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return True  # a URL Python cannot split is not linked either
    host = host.rstrip(".")
    if not _PLAIN_HOST.fullmatch(host) or any(label.startswith("xn--") for label in host.split(".")):
        return True  # IPv6 literals, percent-encoding, anything IDNA maps (punycode is decoded too)
    if host == "localhost" or host.endswith(".localhost"):
        return True
    number = _ipv4(host)
    return number is not None and (number >> 24 == 127 or number == 0)


_PLAIN_HOST: Final = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")
"""What urlsplit's lower-cased `hostname` must be for a link to be live."""


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
