"""Explicit knowledge lines in session text → candidate memories (SPEC §7 save-session).

Only lines that state knowledge outright are taken: decisions, rules ("always/never/must"),
gotchas, preferences, conventions, procedures and "remember …". Everything else is chat.
The text is redacted (SPEC §4.1) before anything else, so a title cut at 80 characters never
keeps half a secret; a candidate carries the count of `[REDACTED]` marks in its line in
`redacted` (a private span dropped from a line leaves no mark and is not counted).
"""

from __future__ import annotations

import re
from typing import Any, Final

from store.invisible import without_invisible
from store.redact import MARK, redact

MAX_CANDIDATES: Final = 20
_MARKER: Final = re.compile(r"^\s*(?:[-*•>]+|\d+[.)])\s*")
_KINDS: Final = (
    (
        "decision",
        re.compile(
            r"\b(we decided|decided to|decision\s*:|we chose|we went with|we will use|going forward we)\b",
            re.I,
        ),
    ),
    (
        "gotcha",
        re.compile(r"\b(gotcha|beware|watch out|careful|pitfall|caveat|breaks when|fails when|trap)\b", re.I),
    ),
    ("rule", re.compile(r"\b(always|never|must|must not|do not|don't|rule\s*:)\b", re.I)),
    ("preference", re.compile(r"\b(prefer|i like|i'd rather|preference\s*:)\b", re.I)),
    (
        "convention",
        re.compile(r"\b(convention\s*:|by convention|we name|naming\s*:|is named|are named)\b", re.I),
    ),
    (
        "procedure",
        re.compile(
            r"\b(to (?:release|deploy|run|build|reset|rotate|migrate)\b.*\b(run|use)\b|steps?\s*:|procedure\s*:)",
            re.I,
        ),
    ),
    ("fact", re.compile(r"\b(remember( that)?|note that|fyi|fact\s*:)\b", re.I)),
)
_LEAD: Final = re.compile(
    r"^(?:(?:remember|note)(?: that)?|fyi|decision|rule|gotcha|convention|preference|procedure|fact|naming)\s*[:,-]?\s*",
    re.I,
)
MIN_WORDS: Final = 4
MAX_LINE: Final = 600


def knowledge_kind(line: str) -> str | None:
    for kind, pattern in _KINDS:
        if pattern.search(line):
            return kind
    return None


def extract_candidates(text: str) -> list[dict[str, Any]]:
    """Candidate dicts (type, title, body) for each explicit knowledge line, de-duplicated."""
    seen: set[str] = set()
    found: list[dict[str, Any]] = []
    text, _ = redact(without_invisible(text))  # whole text first: private spans and key blocks span lines
    for raw in text.splitlines():
        line = _MARKER.sub("", raw).strip()
        redacted = line.count(MARK)
        if len(line.split()) < MIN_WORDS or len(line) > MAX_LINE or line.endswith("?"):
            continue
        kind = knowledge_kind(line)
        if kind is None:
            continue
        key = " ".join(re.findall(r"\w+", line.lower()))
        if key in seen:
            continue
        seen.add(key)
        statement = _LEAD.sub("", line).strip()
        statement = statement[:1].upper() + statement[1:]
        title = statement if len(statement) <= 80 else statement[:79].rstrip() + "…"
        candidate: dict[str, Any] = {"type": kind, "title": title.rstrip("."), "body": statement}
        if redacted:
            candidate["redacted"] = redacted
        found.append(candidate)
        if len(found) == MAX_CANDIDATES:
            break
    return found
