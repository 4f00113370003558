"""Redaction of secret-looking strings before any preview (SPEC §4.1), table-driven.

Each secret case names the secret that must vanish; each false-positive case must come back
byte-for-byte unchanged with a count of zero.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from store.propose import mining
from store.safety.redact import MARK, redact
from store.store import Store
from store.write import commits, notes, proposals
from tests.support.secret_corpus import CORPUS

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_CLASSIC = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_FINE = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF"
GITLAB = "glpat-" + "xY9zAbCdEfGhIjKlMnOp"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aumfXCcFfq8fJ9u0b1ZpO5w3Ih\n"
    "q9Gm2mGl4Lz0Dsq1PZUZVn8Vv8a9Fh3fDbq3CwIDAQABAoIBAQCrmVq0GZ0eXQ==\n"
    "-----END RSA PRIVATE KEY-----"
)

SECRETS: list[tuple[str, str, str]] = [
    # (case name, text, the secret that must not survive)
    ("aws-access-key", f"the deploy user key is {AWS_KEY} for staging", AWS_KEY),
    ("github-classic", f"push with {GITHUB_CLASSIC} from CI", GITHUB_CLASSIC),
    ("github-fine-grained", f"token {GITHUB_FINE} expires in May", GITHUB_FINE),
    ("gitlab", f"GitLab runner uses {GITLAB}", GITLAB),
    ("slack", f"bot posts with {SLACK} into #deploys", SLACK),
    ("stripe-live", f"prod stripe key {STRIPE}", STRIPE),
    ("jwt", f"Authorization: Bearer {JWT}", JWT),
    ("pem-block", f"key below\n{PEM}\nend of key", "MIIEpAIBAAKCAQEA1c7"),
    ("url-password", "DATABASE_URL is postgres://billing:s3cr3tPass@db.internal:5432/app", "s3cr3tPass"),
    ("env-api-key", "API_KEY=abcd1234efgh5678", "abcd1234efgh5678"),
    ("env-export-quoted", 'export DB_PASSWORD="hunter2hunter2"', "hunter2hunter2"),
    ("env-secret-colon", "STRIPE_WEBHOOK_SECRET: whsec_live_0123456789", "whsec_live_0123456789"),
    ("private-span", "keep this <private>my home address is 12 Elm St</private> and this", "12 Elm St"),
]


@pytest.mark.parametrize(("text", "secret"), [(t, s) for _, t, s in SECRETS], ids=[c for c, _, _ in SECRETS])
def test_secret_is_redacted(text: str, secret: str) -> None:
    cleaned, count = redact(text)
    assert secret not in cleaned
    assert count >= 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {AWS_KEY} here", f"key {MARK} here"),
        ("postgres://billing:s3cr3tPass@db.internal:5432/app", f"postgres://{MARK}@db.internal:5432/app"),
        ("API_KEY=abcd1234efgh5678", f"API_KEY={MARK}"),
        ('export DB_PASSWORD="hunter2hunter2"', f'export DB_PASSWORD="{MARK}"'),
        ("a <private>hidden</private> b", "a  b"),
        (f"x\n{PEM}\ny", f"x\n{MARK}\ny"),
    ],
    ids=["aws", "url", "env", "export", "private", "pem"],
)
def test_redaction_shape(text: str, expected: str) -> None:
    """Only the secret is replaced; the surrounding text and the key names stay readable."""
    cleaned, count = redact(text)
    assert cleaned == expected
    assert count == 1


def test_private_span_is_dropped_not_marked() -> None:
    cleaned, count = redact("before <private>secret plans</private> after")
    assert "secret plans" not in cleaned
    assert "<private>" not in cleaned and MARK not in cleaned
    assert cleaned.startswith("before") and cleaned.endswith("after")
    assert count == 1


def test_counts_every_redaction() -> None:
    text = f"{AWS_KEY}\n{GITHUB_CLASSIC}\nAPI_KEY=abcd1234efgh5678\n<private>x</private>"
    cleaned, count = redact(text)
    assert count == 4
    assert cleaned.count(MARK) == 3


def test_redaction_is_idempotent() -> None:
    once, _ = redact(f"API_KEY=abcd1234efgh5678 and {STRIPE}")
    twice, count = redact(once)
    assert twice == once
    assert count == 0


FALSE_POSITIVES: list[tuple[str, str]] = [
    ("sha256", "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of the empty file"),
    ("git-short", "fixed in commit 3f9a2b1, see the changelog"),
    ("git-full", "reverted by 9fceb02d0ae598e95dc970b74767f19372d61af8 yesterday"),
    ("uuid", "tenant 123e4567-e89b-12d3-a456-426614174000 is the demo account"),
    ("word-token", "the token bucket refills every second; rotate the token weekly"),
    ("password-policy", "password policy: at least 12 characters, checked at signup"),
    ("url-plain", "docs at https://docs.example.com:8443/api/v2?page=1#auth"),
    ("ssh-git-url", "clone ssh://git@github.com/acme/ledger.git or git@github.com:acme/ledger.git"),
    ("kebab-id", "see never-edit-applied-migrations and use-uv-for-python"),
    ("env-placeholder", "API_KEY=[REDACTED] was already scrubbed"),
]


@pytest.mark.parametrize("text", [t for _, t in FALSE_POSITIVES], ids=[c for c, _ in FALSE_POSITIVES])
def test_false_positive_survives(text: str) -> None:
    cleaned, count = redact(text)
    assert cleaned == text
    assert count == 0


@pytest.mark.parametrize(
    "text", ["MAX_TOKENS=4096", "Password: must be rotated every 90 days", "token_budget: 2000"]
)
def test_settings_that_merely_mention_secret_words_survive(text: str) -> None:
    """engram's own choice: only secret-named env-style keys (GITHUB_TOKEN=…) are assignments to redact."""
    assert redact(text) == (text, 0)


PGP = (
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n"
    "\n"
    "lQOYBGOq1bIBCADQxkF3p2Jh9l0wWvQk4Q8rJ2c3Vb7n0zYb2FvZ0o9Jb3vK1mXc\n"
    "=Ab3d\n"
    "-----END PGP PRIVATE KEY BLOCK-----"
)
MORE_SECRETS: list[tuple[str, str, str]] = [
    ("pgp-private-key-block", f"my signing key:\n{PGP}\nkeep it safe", "lQOYBGOq1bIBCADQxkF3p2"),
    ("url-password-with-at", "DATABASE_URL=postgres://app:p@ssw0rd@db.internal:5432/app", "p@ssw0rd"),
    ("url-password-with-at-prose", "connect to postgres://app:p@ssw0rd@db.internal:5432/app today", "ssw0rd"),
    ("url-password-with-slash", "use mongodb://admin:ab/cd+ef@mongo.internal/admin", "ab/cd+ef"),
    ("url-password-no-user", "the cache is redis://:s3cretRedis@cache.internal:6379/0", "s3cretRedis"),
    (
        "aws-credentials-file",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI",
    ),
    ("lower-env-password", "db_password=hunter2", "hunter2"),
    ("mixed-case-env", "Stripe_Api_Key=rk_abc123def", "rk_abc123def"),
    ("lower-yaml-password", "  password: hunter2", "hunter2"),
    ("json-password", '{"password": "hunter2"}', "hunter2"),
    ("mid-line-assignment", "log in with db_password=hunter2 on the replica", "hunter2"),
    ("session-line", "password=hunter2", "hunter2"),
]


@pytest.mark.parametrize(
    ("text", "secret"), [(t, s) for _, t, s in MORE_SECRETS], ids=[c for c, _, _ in MORE_SECRETS]
)
def test_more_secret_kinds_are_redacted(text: str, secret: str) -> None:
    cleaned, count = redact(text)
    assert secret not in cleaned
    assert count >= 1


def test_url_password_shape_keeps_host_and_path() -> None:
    assert redact("redis://:pw12@cache.internal:6379/0") == (f"redis://{MARK}@cache.internal:6379/0", 1)
    assert redact("postgres://app:p@ss/w0rd@db:5432/app") == (f"postgres://{MARK}@db:5432/app", 1)


def test_lower_case_assignment_keeps_the_key() -> None:
    assert redact("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG") == (f"aws_secret_access_key = {MARK}", 1)


PROSE: list[str] = [
    "password policy: at least 12 characters, checked at signup",
    "the token budget is 2000 per request",
    "Password: must be rotated every 90 days",
    "password: required",
    "the secret: keep diffs small",
    "see https://example.com:8443/users/@alice for the profile",
    "token_budget = 2000",
    "max_tokens=4096",
    "email me at ops@example.com or page the on-call",
    "the api_key field is optional in the request body",
    "    secrets: inherit",
    "password: ${{ secrets.DB_PASSWORD }}",
]


@pytest.mark.parametrize("text", PROSE)
def test_prose_about_secrets_survives(text: str) -> None:
    assert redact(text) == (text, 0)


SECRET = "Zq9xW2vT7kLm"
KEY_FORMS: list[tuple[str, str]] = [
    # (case name, text holding SECRET)
    ("json-camel-client-secret", f'{{"clientSecret": "{SECRET}"}}'),
    ("json-camel-db-password", f'{{"dbPassword": "{SECRET}", "port": 5432}}'),
    ("json-camel-github-token", f'"githubToken": "{SECRET}",'),
    ("json-camel-api-key", f'"apiKey": "{SECRET}"'),
    ("yaml-camel", f"  dbPassword: {SECRET}"),
    ("yaml-pascal", f"ClientSecret: {SECRET}"),
    ("code-camel-tight", f"githubToken={SECRET}"),
    ("code-camel-spaced", f'const apiKey = "{SECRET}";'),
    ("run-together-lower", f"dbpassword={SECRET}"),
    ("mid-line-colon", f"the staging password: {SECRET} until friday"),
    ("mid-line-secret-colon", f"use client secret: {SECRET} for the sandbox"),
    ("authorization-basic", "Authorization: Basic Ym9iOlpxOXhXMnZUN2tMbQ=="),
    ("authorization-bearer-opaque", f"Authorization: Bearer {SECRET}abcdEFGH"),
    ("bearer-in-curl", f'curl -H "Authorization: Bearer {SECRET}" https://api.example.com'),
    ("env-db-pass", f"DB_PASS={SECRET}"),
    ("env-mysql-pwd", f"MYSQL_PWD={SECRET}"),
    ("env-signing-key", f"SIGNING_KEY={SECRET}"),
    ("netrc", f"machine api.example.com login bob password {SECRET}"),
    ("netrc-split", f"machine api.example.com\n  login bob\n  password {SECRET}"),
    ("mysql-p", f"mysql -u root -p{SECRET} billing"),
]


@pytest.mark.parametrize("text", [t for _, t in KEY_FORMS], ids=[c for c, _ in KEY_FORMS])
def test_secret_named_keys_in_every_form_are_redacted(text: str) -> None:
    cleaned, count = redact(text)
    hidden = "Ym9iOlpxOXhXMnZUN2tMbQ" if "Basic" in text else SECRET
    assert hidden not in cleaned, cleaned
    assert count >= 1


def test_slack_webhook_url_is_redacted() -> None:
    url = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX"
    cleaned, count = redact(f"alerts post to {url} on failure")
    assert "aBcDeFgHiJkLmNoPqRsTuVwX" not in cleaned and count == 1
    assert cleaned == f"alerts post to {MARK} on failure"


def test_camel_case_key_shape_keeps_the_key() -> None:
    assert redact(f'{{"clientSecret": "{SECRET}"}}') == (f'{{"clientSecret": "{MARK}"}}', 1)
    assert redact(f"Authorization: Bearer {SECRET}abcd") == (f"Authorization: Bearer {MARK}", 1)


MORE_PROSE: list[str] = [
    "the password field is required on the signup form",
    "tokenBudget: 2000",
    "maxTokens: 4096",
    '{"tokenBudget": 2000, "maxTokens": 4096}',
    "passwordMinLength: 12",
    "the staging password: ask ops in the vault channel",
    "reset the password: click Forgot on the login page",
    "bypass=true for the health check",
    "compass: north",
    "PWD=/home/alice/projects",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    "set apiKey: ${API_KEY} in the compose file",
    "mysql -p prompts for the password",
    "the pass rate is 98% on main",
    "machine learning login flow: the password step comes last",
]


@pytest.mark.parametrize("text", MORE_PROSE)
def test_more_prose_and_settings_survive(text: str) -> None:
    """A key must end in a secret word (`tokenBudget` does not); a value mid-line must look
    like a secret (a digit or symbol, or mixed case), not a word; placeholders are kept."""
    assert redact(text) == (text, 0)


# --- through the write path (issue 19: a token with a zero-width joiner inside reached
# pending-approvals.json and the committed memory file) ------------------------------------

ZWJ = "\u200d"


def _split_secrets() -> list[tuple[str, str]]:
    """(secret with a zero-width joiner in its middle, line holding it): kinds the issue named."""
    wanted = (
        "gitlab-runner-authentication-token",
        "slack-app-token",
        "stripe-webhook-secret",
        "huggingface-access-token",
        "google-oauth-client-secret",
        "pypi-upload-token",
        "authorization-bearer-all-letters",
        "docker-login-p",
    )
    out = []
    for kind, before, secret, after in CORPUS:
        if kind in wanted:
            mid = len(secret) // 2
            out.append((secret, before + secret[:mid] + ZWJ + secret[mid:] + after))
    assert len(out) == len(wanted)
    return out


def _leaks(data: bytes, secrets: list[str]) -> list[str]:
    """Each secret whose first or second half appears in `data` (raw or JSON-escaped joiner)."""
    text = data.decode("utf-8")
    return [s for s in secrets if s[: len(s) // 2] in text or s[len(s) // 2 :] in text]


def test_a_split_secret_reaches_neither_the_pending_file_nor_the_memory_file(workspace: Path) -> None:
    store = Store(workspace, clock=lambda: datetime(2026, 12, 1, 12, tzinfo=UTC).timestamp())
    pairs = _split_secrets()
    secrets = [s for s, _ in pairs]
    raw = {
        "type": "fact",
        "title": "Staging credentials for the zorblax fleet " + pairs[0][1].split()[2],
        "body": "How the zorblax fleet signs in:\n" + "\n".join(line for _, line in pairs) + "\n",
        "tags": ["zorblax", pairs[3][1].split()[2]],
    }
    entries, redactions = proposals.draft(store, [raw])
    preview = proposals.store_proposal(store, entries, redactions, "save")
    pending = workspace / ".engram" / "pending-approvals.json"
    assert _leaks(pending.read_bytes(), secrets) == []
    assert redactions >= len(pairs) and MARK.encode() in pending.read_bytes()

    report = commits.commit(store, preview.token, "all")
    written = workspace / ".engram" / "memory" / f"{report.written[0]['id']}.md"
    body = written.read_bytes()
    assert body.count(MARK.encode()) >= len(pairs) and _leaks(body, secrets) == []
    assert ZWJ.encode() not in body
    for path in sorted(p for p in (workspace / ".engram").rglob("*") if p.is_file()):
        assert _leaks(path.read_bytes(), secrets) == [], path


def test_a_split_secret_does_not_reach_a_working_note(workspace: Path) -> None:
    store = Store(workspace)
    secret, line = _split_secrets()[0]
    draft = notes.draft_note(store, f"The runner came back after re-registering: {line}")
    notes.save_note(store, draft)
    for path in (workspace / ".engram" / "working").glob("*.md"):
        assert _leaks(path.read_bytes(), [secret]) == [], path
    assert draft.redactions == 1


def test_invisible_characters_outside_a_secret_stay_for_the_checks_to_refuse() -> None:
    """Only what was inside the secret goes with it: a zero-width space elsewhere stays, so the
    candidate check still refuses it, and an emoji's joiners are untouched."""
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    text = f"ok {family} \u200b and {AWS_KEY[:6]}{ZWJ}{AWS_KEY[6:]} done"
    assert redact(text) == (f"ok {family} \u200b and {MARK} done", 1)


def test_a_private_span_with_a_joiner_in_its_tag_is_dropped() -> None:
    assert redact(f"keep <pri{ZWJ}vate>home address</private> this") == ("keep  this", 1)


def test_a_split_secret_is_not_mined_from_a_session() -> None:
    pairs = _split_secrets()
    text = "\n".join(f"We decided the staging fleet signs in this way: {line}" for _, line in pairs)
    found = mining.extract_candidates(text)
    assert found, "the decisions are mined"
    for candidate in found:
        assert _leaks(repr(candidate).encode(), [s for s, _ in pairs]) == [], candidate


@pytest.mark.parametrize(
    "line",
    [
        "curl " * 20_000,
        "docker login " * 8_000,
        "mysql " * 16_000,
        "sshpass " * 12_000,
        "curl -u " * 12_000,
        "a://b:c" * 14_000,
        "\n" * 100_000,
        " \n" * 50_000,
    ],
    ids=[
        "curl",
        "docker-login",
        "mysql",
        "sshpass",
        "curl-u",
        "url-credentials",
        "blank-lines",
        "space-lines",
    ],
)
def test_a_shape_repeated_on_one_long_line_costs_linear_time(line: str) -> None:
    """A command rule matches its flag and then looks back for the command: `curl[^\\n]*?-u`
    scanned the rest of the line from every `curl` (about 30 s for 100 KB, now well under 1 s);
    URL credentials are bounded in length (27 s for a run of `a://b:c`); a line-start rule
    allows only spaces and tabs before its key (`^\\s*` crossed every following line: 35 s for
    10,000 blank lines)."""
    started = time.perf_counter()
    assert redact(line) == (line, 0)
    assert time.perf_counter() - started < 8
