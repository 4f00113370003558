"""Secrets out of every field before anyone sees a preview (SPEC §4.1).

Text inside `<private>…</private>` is dropped; secret-looking strings become `[REDACTED]`.
Patterns aim at things that are secrets by shape, so hashes, UUIDs, commit ids and prose
about secrets ("password policy", "the token budget") survive:

* provider key prefixes (AWS, GitHub, GitLab, Slack, Stripe, OpenAI/Anthropic, Google), JWTs;
* private key blocks of every armour kind: PEM (`-----BEGIN … PRIVATE KEY-----`), PGP
  (`PRIVATE KEY BLOCK`), SSH2 (`---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`), PuTTY files;
* the credentials of a URL (`scheme://user:password@host`, also with no user and with `@` or
  `/` inside the password; the last `@` before the host ends it; `host:8443/` is a port);
* webhook URLs that are credentials by themselves (Slack `hooks.slack.com/services/…`,
  Discord `…/api/webhooks/…`): the whole URL;
* HTTP credentials: `Authorization: Basic|Bearer|Token|Digest <value>` (the value), and a
  bare `Bearer <value>` of 16 or more token characters holding a digit;
* `.netrc` lines (`machine h login u password p`, also with `password p` on its own line),
  and `mysql … -pPASSWORD`;
* assignments to secret-named keys. A key is secret-named when it *ends* in a secret word:
  `…password`, `…passwd`, `…passphrase`, `…secret(s)`, `…token`, `…api_key`/`apiKey`,
  `…private_key`, `…access_key`, `…secret_key`, `…signing_key`, `…credential(s)`, in any case
  and form: `UPPER_CASE`, `snake_case`, `kebab-case`, `dotted.key`, `camelCase`
  (`clientSecret`, `dbPassword`, `githubToken`), `PascalCase` and run together
  (`dbpassword`). The short words `pass` and `pwd` count only after a separator (`DB_PASS`,
  `MYSQL_PWD`), so `bypass`, `compass` and the shell's `PWD` are not keys. A key that only
  *contains* a secret word (`token_budget`, `tokenBudget`, `max_tokens`, `passwordMinLength`)
  is not secret-named. The value is redacted when the assignment is
  - `key=value` with nothing around `=`, anywhere in a line (`db_password=hunter2`), or
    `UPPER_CASE=value` / `export UPPER_CASE=value` at a line start (`.env` files);
  - `key = value` / `key: value` / `"key": "value"` where the value is quoted or is the last
    thing on its line (`aws_secret_access_key = …`, YAML, JSON) and is not a placeholder
    word such as `required` or `optional`;
  - `key: value` / `key = value` in the middle of a line (`the staging password: Zq9x… until
    friday`) when the value looks like a secret rather than a word: it holds a digit or a
    symbol, or a capital letter after its first. So "password: must be rotated" and
    "password: click Forgot" stay.
  Never redacted as values: template references (`$VAR`, `${…}`, `<token>`, `{{ … }}`),
  values already `[REDACTED]`, and numbers of at most five digits (`token: 2000` is a limit or
  a count, not a credential; a longer run of digits is redacted, it may be a PIN or a seed).
"""

from __future__ import annotations

import re
from typing import Final

MARK: Final = "[REDACTED]"
_PRIVATE: Final = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)
_ARMOUR: Final = r"-{4,5} ?EDGE (?:[A-Z0-9]+ )*(?:PRIVATE|SECRET) KEY(?: BLOCK)? ?-{4,5}"
_PATTERNS: Final = tuple(
    re.compile(p, re.DOTALL)
    for p in (
        _ARMOUR.replace("EDGE", "BEGIN") + r".*?(?:" + _ARMOUR.replace("EDGE", "END") + r"|\Z)",
        r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)",
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
        # user:password@ in URLs: the user may be empty, the password may hold '@' and '/';
        # a port followed by a path (`host:8443/users/@alice`) is not a password.
        r"(?<=://)[^\s:/@]*:(?!\d+(?:[/?#\s]|$))\S+?(?=@[^\s@]*(?:\s|$))",
        r"\bhttps://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+",
        r"\bhttps://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+",
    )
)
_ENV_ASSIGNMENT: Final = re.compile(
    r"(?m)^(\s*(?:export\s+)?[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|ACCESS_KEY|"
    r"SIGNING_KEY|_PASS|_PWD|CREDENTIALS?)(?:_[A-Z0-9_]*)?\s*[=:]\s*)(['\"]?)(?!\[REDACTED\])([^\s'\"]{4,})\2"
)
_SECRET_KEY: Final = (
    # one character class before the word (never a nested repeat), so no backtracking blow-up
    r"(?:[A-Za-z0-9_.-]*?"
    r"(?:secrets?|token|password|passwd|passphrase|api[_-]?key|private[_-]?key|access[_-]?key|"
    r"secret[_-]?key|signing[_-]?key|credentials?)"
    r"|[A-Za-z0-9_.-]*?[A-Za-z0-9][_.-](?:pass|pwd))"
)
_NOT_A_VALUE: Final = r"(?!\[REDACTED\]|\$|<|\{\{|\d{1,5}(?![^\s'\",;])|\d{1,5}[,;]?\s)"
_TIGHT_ASSIGNMENT: Final = re.compile(
    rf"(?i)(?<![\w.-])({_SECRET_KEY}=)(['\"]?){_NOT_A_VALUE}([^\s'\"]{{4,}})\2"
)
_QUOTED_ASSIGNMENT: Final = re.compile(
    rf"(?i)(?<![\w.-])(['\"]?{_SECRET_KEY}['\"]?\s*[=:]\s*)(['\"]){_NOT_A_VALUE}([^'\"\n]{{4,}})\2"
)
_LINE_ASSIGNMENT: Final = re.compile(
    rf"(?im)^(\s*(?:[-*]\s+)?(?:export\s+)?{_SECRET_KEY}\s*[=:]\s*){_NOT_A_VALUE}([^\s'\"]{{4,}})(?=\s*(?:#.*)?$)"
)
_MID_LINE_ASSIGNMENT: Final = re.compile(
    rf"(?i)(?<![\w.-])({_SECRET_KEY}\s*[=:]\s*){_NOT_A_VALUE}([^\s'\"]{{3,}}[^\s'\".,;:)])"
)
_AUTHORIZATION: Final = re.compile(
    r"(?i)\b(authorization\s*:\s*(?:basic|bearer|token|digest)\s+)(?!\[REDACTED\]|\$|<|\{\{)([A-Za-z0-9._~+/=-]{8,})"
)
_BEARER: Final = re.compile(
    r"(?i)\b(bearer\s+)(?!\[REDACTED\])(?=[A-Za-z._~+/=-]*\d)([A-Za-z0-9._~+/=-]{16,})"
)
_NETRC: Final = re.compile(
    r"(?im)(\blogin\s+\S+\s+pass(?:word|wd)\s+)(?!\[REDACTED\])(\S{4,})(?=\s|$)"
    r"|(^[ \t]*pass(?:word|wd)[ \t]+)(?!\[REDACTED\])(\S{4,})(?=[ \t]*$)"
)
_MYSQL: Final = re.compile(r"(\bmysql(?:dump|admin)?\b[^\n]*?\s-p)(?!\[REDACTED\])([^\s'\"]{4,})")
_PLACEHOLDERS: Final = frozenset(
    ("required", "optional", "none", "null", "true", "false", "yes", "no", "string", "empty", "unset")
    + ("hidden", "secret", "redacted", "inherit")  # `secrets: inherit` in GitHub Actions
)


def _looks_secret(value: str) -> bool:
    """A mid-line value that is a secret rather than a word: a digit, a symbol, or a capital
    letter after the first character."""
    return value.lower() not in _PLACEHOLDERS and (
        not value.isalpha() or any(ch.isupper() for ch in value[1:])
    )


def redact(text: str) -> tuple[str, int]:
    """(text with private spans dropped and secrets replaced, number of redactions)."""
    count = 0
    text, dropped = _PRIVATE.subn("", text)
    count += dropped
    for pattern in _PATTERNS:
        text, n = pattern.subn(MARK, text)
        count += n

    def quoted(match: re.Match[str]) -> str:
        return f"{match.group(1)}{match.group(2)}{MARK}{match.group(2)}"

    for assignment in (_ENV_ASSIGNMENT, _TIGHT_ASSIGNMENT, _QUOTED_ASSIGNMENT):
        text, n = assignment.subn(quoted, text)
        count += n

    def last_on_line(match: re.Match[str]) -> str:
        nonlocal count
        if match.group(2).lower() in _PLACEHOLDERS:
            return match.group(0)
        count += 1
        return f"{match.group(1)}{MARK}"

    text = _LINE_ASSIGNMENT.sub(last_on_line, text)

    def value_only(match: re.Match[str]) -> str:
        nonlocal count
        key, value = [g for g in match.groups() if g is not None]
        if not _looks_secret(value):
            return match.group(0)
        count += 1
        return f"{key}{MARK}"

    for pattern in (_AUTHORIZATION, _BEARER, _NETRC, _MYSQL, _MID_LINE_ASSIGNMENT):
        text = pattern.sub(value_only, text)
    return text, count


def redact_all(values: tuple[str, ...] | list[str]) -> tuple[list[str], int]:
    """Each value redacted; (values, redactions)."""
    out: list[str] = []
    total = 0
    for value in values:
        clean, n = redact(value)
        out.append(clean)
        total += n
    return out, total
