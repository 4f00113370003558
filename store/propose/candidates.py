"""Proposed memories from tool and CLI input: every field redacted, then checked (SPEC §4.1)."""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Sequence
from typing import Any, Final

from store.errors import InvalidCandidate
from store.files.ids import ID_RULE, is_valid_id
from store.files.memory import MAX_TITLE
from store.propose.code_fields import code_fields
from store.propose.verdicts import Candidate
from store.safety.invisible import describe, first_invisible, invisible_reference
from store.safety.redact import MARK, redact, redact_all


def make_candidates(raw: Sequence[dict[str, Any]]) -> tuple[list[Candidate], int]:
    """Candidates from tool/CLI input with every field redacted; (candidates, redactions).

    Title, body, tags and paths are redacted (SPEC §4.1); a mined candidate brings the count
    of what mining already redacted (`redacted`). Ids must match in full before any path is
    built; a field engram would refuse to load back (a control character in the title, a title
    that redaction grew past the limit) is refused here, naming the candidate and field. So is
    a field holding characters the human cannot see (store/safety/invisible.py): tag characters, bidi
    controls and other format characters are refused in title, body, tags and paths alike, so
    the preview, the pinned `fields` and the written file hold the same visible text.
    """
    out: list[Candidate] = []
    total = 0
    for n, item in enumerate(raw, 1):
        title, n_title = redact(str(item["title"]))
        body, n_body = redact(str(item["body"]))
        tags, n_tags = redact_all([str(t) for t in item.get("tags", ())])
        paths, n_paths = redact_all([str(p) for p in item.get("paths", ())])
        total += n_title + n_body + n_tags + n_paths + int(item.get("redacted", 0))
        title = " ".join(title.split()) or "untitled"
        _check_title(n, title, grew=n_title > 0)
        for name, values in (("tags", tags), ("paths", paths)):
            _check_single_lines(n, name, values)
        for name, values in (("title", [title]), ("body", [body]), ("tags", tags), ("paths", paths)):
            _check_visible(n, name, values)
        requested, supersedes = item.get("id"), item.get("supersedes")
        for name, value in (("id", requested), ("supersedes", supersedes)):
            if value is not None and not is_valid_id(value):
                raise InvalidCandidate(
                    f"candidate {n}: {name} {str(value)[:80]!r} is not a memory id: {ID_RULE}"
                )
        code, n_code = code_fields(n, item)  # store.propose.code_fields: refs, valid_until, review_after
        total += n_code
        out.append(
            Candidate(
                type=item["type"],
                title=title,
                body=body.strip() + "\n",
                scope=item.get("scope", "project"),
                tags=tuple(dict.fromkeys(t.lower().replace(MARK.lower(), MARK) for t in tags)),
                paths=tuple(dict.fromkeys(paths)),
                id=requested,
                supersedes=supersedes,
                always=_always(n, item.get("always")),
                **code,
            )
        )
    return out, total


def _always(n: int, value: object) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise InvalidCandidate(f"candidate {n}: always must be true or false, not {str(value)[:40]!r}")


def _check_title(n: int, title: str, *, grew: bool) -> None:
    if len(title) > MAX_TITLE:
        after = " after redaction" if grew else ""
        raise InvalidCandidate(
            f"candidate {n}: the title is {len(title)} characters{after}, more than {MAX_TITLE}: "
            "shorten it (move detail into the body)"
        )
    _check_single_lines(n, "title", [title])


_HIDDEN_ORDER: Final = frozenset(
    "\u2028\u2029\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Line separators and bidirectional controls: the dialog would show another text than the file holds."""


def _check_single_lines(n: int, name: str, values: Sequence[str]) -> None:
    """Title, tags and paths are single lines the human reads as written: no control characters
    (NUL included), no line separators, no bidirectional overrides."""
    for value in values:
        bad = next((ch for ch in value if unicodedata.category(ch) == "Cc" or ch in _HIDDEN_ORDER), None)
        if bad is not None:
            raise InvalidCandidate(
                f"candidate {n}: {name} {value[:60]!r} contains the control character U+{ord(bad):04X}: "
                "remove it"
            )


def _check_visible(n: int, name: str, values: Sequence[str]) -> None:
    """Refuse invisible characters in any written field (store/safety/invisible.py says which)."""
    for value in values:
        bad = first_invisible(value)
        if bad is not None:
            raise InvalidCandidate(
                f"candidate {n}: {name} contains the invisible character {describe(bad)}, which the "
                "human would not see in the preview: remove it and propose again"
            )
        reference = invisible_reference(value)
        if reference is not None:
            raise InvalidCandidate(
                f"candidate {n}: {name} contains {reference}, which markdown shows as the invisible "
                f"character {describe(html.unescape(reference)[0])}: remove it and propose again"
            )
