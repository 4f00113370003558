"""Secrets out of every field before anyone sees a preview (SPEC §4.1).

The rest, and why: docs/redaction.md.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from typing import Final, NamedTuple

from store.safety.invisible import Matchable
from store.safety.redact_rules import TOKENS, WEBHOOKS

MARK: Final = "[REDACTED]"


class _Rule(NamedTuple):
    pattern: re.Pattern[str]
    group: int = 0
    """The group that is the secret (0: the whole match)."""
    secret: Callable[[str], bool] | None = None
    """A test the secret must pass, or the match is left alone."""
    mark: str = MARK
    code: bool = False
    """Leave the match alone when the value is code (`_is_code`; group 1 holds the key)."""
    command: re.Pattern[str] | None = None
    """A command that must stand earlier on the match's line (within `_COMMAND_REACH`): the
    rule matches the flag and this is checked after, which keeps the cost linear (a pattern
    `curl[^\\n]*?-u` is quadratic on a long line of `curl curl …`)."""
    kind: str = "secret-named value"
    """What a person is told was redacted (`redaction_kinds`); `_TOKEN` names the token's own kind."""


_COMMAND_REACH: Final = 2000
_ARMOUR: Final = r"-{4,5} ?EDGE (?:[A-Z0-9]+ )*(?:PRIVATE|SECRET) KEY(?: BLOCK)? ?-{4,5}"
_SECRET_KEY: Final = (
    # one character class before the word (never a nested repeat), so no backtracking blow-up
    r"(?:[A-Za-z0-9_.-]*?"
    r"(?:secrets?|token|password|passwd|passphrase|api[_-]?key|private[_-]?key|access[_-]?key|"
    r"secret[_-]?key|signing[_-]?key|credentials?)"
    r"|[A-Za-z0-9_.-]*?[A-Za-z0-9][_.-](?:pass|pwd))"
)
_NOT_A_VALUE: Final = r"(?!\[REDACTED\]|\$|<|\{\{|\d{1,5}(?![^\s'\",;])|\d{1,5}[,;]?\s)"
_NOT_TEMPLATE: Final = r"(?!\[REDACTED\]|\$|<|\{\{)"
_KEY_CHARS: Final = re.compile(r"[A-Za-z0-9+/=_.-]+")
_CALL: Final = re.compile(r"[A-Za-z_][\w.]*[(\[]")
_SECRET_ATTRIBUTE: Final = re.compile(
    r"[a-z_]\w*(?:\.[a-z_]\w*)*\.\w*(?:secret|token|passw|passphrase|api_?key|private_?key|access_?key|"
    r"signing_?key|credential|pass|pwd)\w*"
)
_TYPES: Final = frozenset(
    ("str", "bytes", "object", "bool", "float", "int", "any", "dict", "list", "tuple", "secretstr")
)
"""Type annotations after a secret-named key (`token: object`, `password: SecretStr`)."""
_PLACEHOLDERS: Final = frozenset(
    ("required", "optional", "none", "null", "true", "false", "yes", "no", "string", "empty", "unset")
    + ("hidden", "secret", "redacted", "inherit")  # `secrets: inherit` in GitHub Actions
    + ("read", "write")  # `id-token: write`, a workflow's permission
)


def _looks_secret(value: str) -> bool:
    """A value that is a secret rather than a word: a digit, a symbol, or a capital letter
    after the first character."""
    return value.lower() not in _PLACEHOLDERS and (
        not value.isalpha() or any(ch.isupper() for ch in value[1:])
    )


def _not_placeholder(value: str) -> bool:
    return value.rstrip(",;").lower() not in _PLACEHOLDERS | _TYPES


def _is_code(key: str, value: str) -> bool:
    """An unquoted value that is an expression, not a literal: a call or subscript
    (`get_token()`, `parts['password']`, `Final[int]`), the key's own name (`token=token`), an
    attribute named by a secret word (`password=args.password`, `settings.SECRET_KEY`), an
    attribute of `self`, `cls` or `this`, a literal (`True`, `None`) or a type (`SecretStr`).
    A literal secret is quoted in code; these forms fill memory bodies that quote code."""
    words = re.findall(r"\w+", key)
    name = words[-1].lower() if words else ""
    plain = value.rstrip(",;:)]}").lower()
    return (
        _CALL.match(value) is not None
        or _SECRET_ATTRIBUTE.fullmatch(plain) is not None
        or plain in (name, "true", "false", "none", "null")
        or plain in _TYPES
        or plain.startswith(("self.", "cls.", "this."))
    )


def _header_value(value: str) -> bool:
    """An `Authorization:` value: any run of 16 token characters (an all-letter bearer token
    too), or a shorter one that is not a plain word."""
    return _not_placeholder(value) and (len(value) >= 16 or _looks_secret(value))


def _long_secret(value: str) -> bool:
    """A bare `Bearer` value: 16 characters or more with a digit or an inner capital."""
    return len(value) >= 16 and any(ch.isdigit() or (i and ch.isupper()) for i, ch in enumerate(value))


def _prose_password(value: str) -> bool:
    """A word after "password" that is one: a letter and a digit or symbol, no path or URL
    ("password is Winter2024!", not "password is required" or "password field v2")."""
    return (
        _not_placeholder(value)
        and any(ch.isalpha() for ch in value)
        and any(ch.isdigit() or not ch.isalnum() for ch in value)
        and "/" not in value
        and not re.fullmatch(r"v?\d+(?:\.\d+)+", value)
        and not re.fullmatch(r"[A-Za-z_]\w*(?:\.\w+)+|\w+\(.*", value)  # an attribute or a call: code
    )


def _long_secret_or_hex(value: str) -> bool:
    return _long_secret(value) or re.fullmatch(r"[0-9a-fA-F]{32,}", value) is not None


def _looks_like_key(value: str) -> bool:
    """An `.env` `…_KEY=` value that is a key, not a name, a version, a path or code: 16 token
    characters or more with a digit and a letter."""
    return (
        len(value) >= 16
        and _KEY_CHARS.fullmatch(value) is not None
        and not value.startswith(("/", "~", "."))
        and any(ch.isdigit() for ch in value)
        and any(ch.isalpha() for ch in value)
    )


@functools.cache
def _rules() -> tuple[_Rule, ...]:
    """The rules in the order they run, compiled on the first redaction, not at
    import: every CLI command imports this module, few of them redact."""

    def rule(
        pattern: str,
        group: int = 0,
        secret: Callable[[str], bool] | None = None,
        flags: int = 0,
        code: bool = False,
        command: str | None = None,
        kind: str = "secret-named value",
    ) -> _Rule:
        return _Rule(
            re.compile(pattern, flags),
            group,
            secret,
            code=code,
            command=None if command is None else re.compile(command),
            kind=kind,
        )

    return (
        _Rule(
            re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL),
            mark="",
            kind="<private> text",
        ),
        rule(
            _ARMOUR.replace("EDGE", "BEGIN") + r".*?(?:" + _ARMOUR.replace("EDGE", "END") + r"|\Z)",
            flags=re.DOTALL,
            kind="private key",
        ),
        rule(
            r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)",
            flags=re.DOTALL,
            kind="private key",
        ),
        rule(
            r"(?<![\w-])(?:" + "|".join(f"(?:{pattern})" for _, pattern in (*WEBHOOKS, *TOKENS)) + ")",
            kind=_TOKEN,
        ),
        # user:password@ in URLs: the user may be empty, the password may hold '@' and '/';
        # a port followed by a path (`host:8443/users/@alice`) is not a password. User and
        # password are bounded (256 each): unbounded, a long run of `a://b:c` is quadratic.
        rule(
            r"(?<=://)[^\s:/@]{0,256}:(?!\d+(?:[/?#\s]|$))\S{1,256}?(?=@[^\s@]*(?:\s|$))",
            kind="password in a URL",
        ),
        rule(
            r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*"
            + _NOT_TEMPLATE
            + r"([^;\s'\"]{8,})",
            1,
            kind="Azure connection-string key",
        ),
        rule(r"(?i)[?&]sig=([A-Za-z0-9%+/=]{16,})", 1, kind="SAS signature"),
        # a command's flag, with the command earlier on its line (`_Rule.command`)
        rule(
            r"(?<!\S)(?:-u|--user)(?:=|\s*)(['\"]?)[^\s:'\"]*:" + _NOT_TEMPLATE + r"([^\s'\"]{3,})\1",
            2,
            command=r"\bcurl\b",
            kind="command-line password",
        ),
        rule(
            r"(?<!\S)(?:-p|--password)(?:=|\s+)(['\"]?)" + _NOT_TEMPLATE + r"([^\s'\"]{3,})\1",
            2,
            command=r"\b(?:docker|podman|nerdctl|buildah|skopeo|oras|helm\s+registry)\s+login\b",
            kind="command-line password",
        ),
        rule(
            r"(?<!\S)-p\s*(['\"]?)" + _NOT_TEMPLATE + r"([^\s'\"]{3,})\1",
            2,
            command=r"\bsshpass\b",
            kind="command-line password",
        ),
        rule(
            r"(?<!\S)-p(['\"]?)" + _NOT_TEMPLATE + r"([^\s'\"]{4,})\1",
            2,
            _looks_secret,
            command=r"\bmysql(?:dump|admin)?\b",
            kind="command-line password",
        ),
        rule(
            r"\"auth\"\s*:\s*\"([A-Za-z0-9+/]{12,}={0,2})\"", 1, kind="registry auth"
        ),  # ~/.docker/config.json
        # prose that names the secret right before it: "the webhook secret is 1545…", "signing
        # key: jP3M…" (a bare "token 7c6a…" is left: random words follow "token" in prose and ids)
        rule(
            r"(?i)\b(?:secret|token|password|passphrase|api[ _-]?key|signing key|access key|private key)"
            r"(?:\s+(?:is|was)\s+|\s*[:=]\s*)(?![0-9a-f]{8}-[0-9a-f]{4}-)(?!\[REDACTED\])([A-Za-z0-9_+/=~-]{20,})"
            r"(?![\w/])",
            1,
            _long_secret,
            kind="secret named in prose",
        ),
        rule(
            r"(?i)\b(?:password|passphrase|passwd|pwd|pw)\b(?:\s+(?:is|was))?\s*[:=]?\s+"
            + _NOT_TEMPLATE
            + r"(?!\[REDACTED\])([^\s'\"`]{8,64}?)(?=[.,;:)]?(?:\s|$))",
            1,
            _prose_password,
            kind="password named in prose",
        ),
        rule(
            r"(?i)\b(?:api[ _-]?key|secret|token|access key|signing key)\b[^.\n]{1,30}?\b(?:is|was)\s+"
            r"(?!\[REDACTED\])([A-Fa-f0-9]{32,}|[A-Za-z0-9_+/=-]{24,})(?![\w/])",
            1,
            _long_secret_or_hex,
            kind="secret named in prose",
        ),
        rule(
            r"(?m)^[ \t]*[\w.*-]+:(?:\d{2,5}|\*):[\w*-]+:[\w*-]+:(?!\[REDACTED\])([^\s:]{4,})[ \t]*$",
            1,
            _looks_secret,
            kind=".pgpass password",
        ),
        rule(
            r"(?m)^([ \t]*(?:export\s+)?[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|"
            r"ACCESS_KEY|SIGNING_KEY|_PASS|_PWD|CREDENTIALS?)(?:_[A-Z0-9_]*)?\s*[=:]\s*)(['\"]?)"
            + _NOT_TEMPLATE
            + r"([^\s'\"]{4,})\2",
            3,
            code=True,
        ),
        rule(
            r"(?m)^([ \t]*(?:export\s+)?[A-Z][A-Z0-9_]*_KEY\s*[=:]\s*)(['\"]?)"
            + _NOT_TEMPLATE
            + r"([^\s'\"]{8,})\2",
            3,
            _looks_like_key,
        ),
        rule(rf"(?i)(?<![\w.-])({_SECRET_KEY}=)(['\"]?){_NOT_A_VALUE}([^\s'\"]{{4,}})\2", 3, code=True),
        rule(
            rf"(?i)(?<![\w.-])(['\"]?{_SECRET_KEY}['\"]?\s*[=:]\s*)(['\"]){_NOT_A_VALUE}([^'\"\n]{{4,}})\2", 3
        ),
        rule(
            rf"(?im)^([ \t]*(?:[-*]\s+)?(?:export\s+)?{_SECRET_KEY}\s*[=:]\s*){_NOT_A_VALUE}([^\s'\"]{{4,}})(?=\s*(?:#.*)?$)",
            2,
            _not_placeholder,
            code=True,
        ),
        rule(
            r"(?i)\b(authorization\s*:\s*(?:basic|bearer|token|digest)\s+)"
            + _NOT_TEMPLATE
            + r"([A-Za-z0-9._~+/=-]{8,})",
            2,
            _header_value,
            kind="Authorization header",
        ),
        rule(
            r"(?i)\b(bearer\s+)(?!\[REDACTED\])([A-Za-z0-9._~+/=-]{16,})",
            2,
            _long_secret,
            kind="bearer token",
        ),
        rule(
            r"(?im)(\blogin\s+\S+\s+pass(?:word|wd)\s+)(?!\[REDACTED\])(\S{4,})(?=\s|$)",
            2,
            _looks_secret,
            kind=".netrc password",
        ),
        rule(
            r"(?im)(^[ \t]*pass(?:word|wd)[ \t]+)(?!\[REDACTED\])(\S{4,})(?=[ \t]*$)",
            2,
            _looks_secret,
            kind=".netrc password",
        ),
        rule(
            rf"(?i)(?<![\w.-])({_SECRET_KEY}\s*[=:]\s*){_NOT_A_VALUE}([^\s'\"]{{3,}}[^\s'\".,;:)])",
            2,
            _looks_secret,
            code=True,
        ),
    )


class _Span(NamedTuple):
    start: int
    end: int
    mark: str


def _spans(flat: str, kinds: list[str] | None = None) -> tuple[list[_Span], int]:
    """The replaced spans of `flat` (sorted, disjoint, in `flat`'s positions) and their count;
    `kinds` gets each redaction's kind, in order (`redaction_kinds`).

    Rules run in order, each on the text the earlier ones left, so a value a token rule has
    already replaced is `[REDACTED]` to the assignment rules."""
    spans: list[_Span] = []
    current, count = flat, 0
    for rule in _rules():
        commands: list[int] = []  # where each occurrence of the rule's command ends
        if rule.command is not None:
            commands = [c.end() for c in rule.command.finditer(current)]
            if not commands:
                continue
        matched = [m for m in rule.pattern.finditer(current) if _accepted(rule, m, current, commands)]
        found = [m.span(rule.group) for m in matched]
        if kinds is not None:
            kinds.extend(_kind_of(rule, m.group(rule.group)) for m in matched)
        if found:
            count += len(found)
            spans = _replaced(spans, found, rule.mark)
            current = _rebuild(flat, spans, lambda i: i)
    return spans, count


_DOCUMENTED_PLACEHOLDER: Final = re.compile(r"(?i)change[-_]?me|replace[-_]?me|your[-_]")
"""A value that says it is not a secret (`changeme-in-production`, `your-password-here`): a note
that a default must be changed is worth keeping, and no real secret is spelt so. Providers'
documented example keys (AWS's `…EXAMPLE`) are still removed: they have a real key's shape."""


_NAMES_A_PLACE: Final = re.compile(
    r"(?i)(?:_PATH|_FILE|_DIR|_URL|_URI|_ENDPOINT|_BACKEND|_LOCATION|_PROVIDER|APPLICATION_CREDENTIALS)"
    r"['\"]?\s*[=:]\s*['\"]?$"
)
_A_PLACE: Final = re.compile(r"(?:~|\.{1,2})?/[\w./-]*|[a-z][a-z0-9+.-]*://[^\s@]+|[a-z][a-z0-9_-]*")
"""A path, a URL with no credentials in it, or a lower-case word: where a secret is kept, not
the secret (`GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/sa.json`, `TOKEN_URL=https://…`,
`SECRET_BACKEND=vault`)."""


def _accepted(rule: _Rule, m: re.Match[str], text: str, commands: list[int]) -> bool:
    value = m.group(rule.group)
    if _DOCUMENTED_PLACEHOLDER.match(value.strip("'\"")):
        return False
    named = m.group(0)[: m.start(rule.group) - m.start(0)]
    if rule.kind != _TOKEN and _NAMES_A_PLACE.search(named) and _A_PLACE.fullmatch(value.strip("'\"")):
        return False
    if rule.secret is not None and not rule.secret(value):
        return False
    if rule.code and _is_code(m.group(1), value):
        return False
    if rule.command is not None:  # a command ends on the match's line, before it
        reach = max(0, m.start() - _COMMAND_REACH)
        line = text.rfind("\n", reach, m.start()) + 1 or reach
        i = bisect.bisect_left(commands, line)
        return i < len(commands) and commands[i] <= m.start()
    return True


def _replaced(spans: list[_Span], found: list[tuple[int, int]], mark: str) -> list[_Span]:
    """`spans` with the text at `found` (positions in the text `spans` left) replaced by `mark`;
    a new span that covers part of an earlier mark takes all of it."""
    starts, shifts = [], []
    shift = 0  # flat position minus current position, before each span
    for span in spans:
        starts.append(span.start - shift)
        shifts.append(shift)
        shift += span.end - span.start - len(span.mark)

    def to_flat(pos: int, end: bool) -> int:
        at = pos - 1 if end else pos  # the character the edge stands on
        i = bisect.bisect_right(starts, at) - 1
        if i < 0:
            return pos
        old = spans[i]
        if at < starts[i] + len(old.mark):  # inside an earlier mark
            return old.end if end else old.start
        return pos + shifts[i] + old.end - old.start - len(old.mark)

    new = [(_Span(to_flat(a, False), to_flat(b, True), mark), 0) for a, b in found]
    merged: list[_Span] = []
    for span, _ in sorted([*new, *((s, 1) for s in spans)], key=lambda p: (p[0].start, -p[0].end, p[1])):
        if not merged or span.start >= merged[-1].end:
            merged.append(span)
    return merged


def _rebuild(text: str, spans: list[_Span], origin: Callable[[int], int]) -> str:
    out: list[str] = []
    at = 0
    for span in spans:
        start, end = origin(span.start), origin(span.end - 1) + 1
        out += (text[at:start], span.mark)
        at = end
    out.append(text[at:])
    return "".join(out)


_TOKEN: Final = "token"
"""The kind of the token rule: each match is named by the kind in redact_rules that it is."""


@functools.cache
def _token_kinds() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(pattern)) for kind, pattern in (*WEBHOOKS, *TOKENS))


def _kind_of(rule: _Rule, value: str) -> str:
    if rule.kind != _TOKEN:
        return rule.kind
    return next((kind for kind, pattern in _token_kinds() if pattern.fullmatch(value)), "token")


def redaction_kinds(text: str) -> list[str]:
    """What `redact(text)` replaces, one kind per redaction (`aws-access-token`, `private key`,
    `password in a URL`, `secret-named value`…): what a person is told was taken out."""
    kinds: list[str] = []
    _spans(Matchable(text).flat, kinds)
    return kinds


def redact(text: str) -> tuple[str, int]:
    """(text with private spans dropped and secrets replaced, number of redactions)."""
    seen = Matchable(text)
    spans, count = _spans(seen.flat)
    return (_rebuild(text, spans, seen.origin), count) if spans else (text, count)


def redact_all(values: tuple[str, ...] | list[str]) -> tuple[list[str], int]:
    """Each value redacted; (values, redactions)."""
    out: list[str] = []
    total = 0
    for value in values:
        clean, n = redact(value)
        out.append(clean)
        total += n
    return out, total
