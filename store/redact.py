"""Secrets out of candidate text before anyone sees a preview (SPEC §4.1).

Text inside `<private>…</private>` is dropped; secret-looking strings become `[REDACTED]`.
Patterns aim at things that are secrets by shape (provider key prefixes, private key blocks,
JWTs, credentials in URLs, `.env` assignments to secret-named keys), so hashes, UUIDs and
commit ids survive.
"""

from __future__ import annotations

import re
from typing import Final

MARK: Final = "[REDACTED]"
_PRIVATE: Final = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)
_PATTERNS: Final = tuple(
    re.compile(p, re.DOTALL)
    for p in (
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
        r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
        r"\bASIA[0-9A-Z]{16}\b",
        r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b",  # GitHub tokens
        r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b",
        r"\bglpat-[A-Za-z0-9_\-]{20,}\b",  # GitLab
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b",  # Slack
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b",  # Stripe
        r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}\b",  # OpenAI / Anthropic style
        r"\bAIza[0-9A-Za-z_\-]{35}\b",  # Google API key
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\b",  # JWT
        r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)",  # user:password@ in URLs
    )
)
_ASSIGNMENT: Final = re.compile(
    r"(?m)^(\s*(?:export\s+)?[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|ACCESS_KEY|"
    r"CREDENTIALS?)(?:_[A-Z0-9_]*)?\s*[=:]\s*)(['\"]?)(?!\[REDACTED\])([^\s'\"]{4,})\2"
)


def redact(text: str) -> tuple[str, int]:
    """(text with private spans dropped and secrets replaced, number of redactions)."""
    count = 0
    text, dropped = _PRIVATE.subn("", text)
    count += dropped
    for pattern in _PATTERNS:
        text, n = pattern.subn(MARK, text)
        count += n

    def assignment(match: re.Match[str]) -> str:
        return f"{match.group(1)}{match.group(2)}{MARK}{match.group(2)}"

    text, n = _ASSIGNMENT.subn(assignment, text)
    count += n
    return text, count
