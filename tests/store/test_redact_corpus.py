"""The redaction corpus (issue 19 item 7): one synthetic example per kind engram promises to
redact, each redacted to exactly `[REDACTED]` with the text around it kept, also when an
invisible character (a zero-width joiner, …) sits inside the secret; and plain developer text,
including every memory body under fixtures/, that must come back unchanged.

The corpus is tests/support/secret_corpus.py, where no literal looks like a live secret.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.safety.redact import MARK, redact
from tests.support.paths import FIXTURES
from tests.support.secret_corpus import ALNUM, CORPUS

KINDS = [kind for kind, *_ in CORPUS]


def test_corpus_kinds_are_unique() -> None:
    assert len(set(KINDS)) == len(KINDS) >= 100


@pytest.mark.parametrize(("before", "secret", "after"), [c[1:] for c in CORPUS], ids=KINDS)
def test_each_kind_is_redacted_and_the_text_around_it_kept(before: str, secret: str, after: str) -> None:
    cleaned, count = redact(before + secret + after)
    assert (cleaned, count) == (before + MARK + after, 1)


INVISIBLE = {
    "zero-width-joiner": "\u200d",
    "zero-width-non-joiner": "\u200c",
    "zero-width-space": "\u200b",
    "word-joiner": "\u2060",
    "soft-hyphen": "\u00ad",
    "left-to-right-mark": "\u200e",
    "byte-order-mark": "\ufeff",
    "variation-selector-16": "\ufe0f",
    "combining-grapheme-joiner": "\u034f",
    "hangul-filler": "\u3164",
}


def hidden_in(secret: str, ch: str) -> str:
    """`secret` with `ch` after its third character and in its middle."""
    mid = len(secret) // 2
    return secret[:3] + ch + secret[3:mid] + ch + secret[mid:]


@pytest.mark.parametrize("ch", INVISIBLE.values(), ids=INVISIBLE.keys())
def test_an_invisible_character_inside_a_secret_does_not_hide_it(ch: str) -> None:
    """Matching runs on the text less its invisible characters; the output keeps none of the
    secret's pieces, and none of the invisible characters that sat inside it."""
    missed = []
    for kind, before, secret, after in CORPUS:
        cleaned, count = redact(before + hidden_in(secret, ch) + after)
        if (cleaned, count) != (before + MARK + after, 1):
            missed.append(f"{kind}: {cleaned!r}")
    assert not missed, "\n".join(missed)


PLAIN: list[str] = [
    "src/engram_mcp/ops/write_ops.py holds the proposal and note flows",
    "see ~/.config/engram/config.toml and /etc/engram/engram.toml for the settings",
    "C:\\Users\\alice\\AppData\\Roaming\\Code\\User\\settings.json is the VS Code file",
    "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8, see the changelog",
    "bisect says 3f9a2b1 broke it; ab538aa fixed it",
    "the empty file hashes to e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "sha256=Oygi2LLroOIZWvyMIA5wTdZCTmlEewZ4fI91gu8HZBY is the wheel RECORD hash",
    "integrity sha512-2zBJc5bX8Ea7mD1BaH1l0bUj+3x1QhTnmXWzfzXHbGy6rA3TSZ6XWmLYqgrAsc7hDtNyWDtM4a5g7oJvzY9rQQ==",
    "tenant 123e4567-e89b-12d3-a456-426614174000 is the demo account",
    "request id 0f8fad5b-d9cb-469f-a165-70867728950e in the log",
    "bump numpy to 2.1.3 and pytest to 8.3.4; python 3.11.9 on CI",
    "the image is ghcr.io/acme/api:v1.42.0-rc.1@sha256:4c4a8b7e8f",
    "export PATH=$HOME/.local/bin:$PATH",
    "export PYTHONPATH=src:tests",
    "API_URL=https://api.example.com/v2",
    "DATABASE_HOST=db.internal",
    "PRIMARY_KEY=id",
    "SORT_KEY=created_at",
    "CACHE_KEY=v2",
    "SSH_KEY=~/.ssh/id_ed25519",
    "CACHE_KEY=v2_2024_11",
    'SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"',
    "SESSION_TIMEOUT_KEY = pytest.StashKey[float]()",
    'EC_PUBLIC_KEY = ObjectIdentifier("1.2.840.10045.2.1")',
    'GET_STREAM_KEY = "_GET_stream"',
    # code that quotes a secret-named key without holding a secret
    "api = get_hf_api(token=token)",
    "login(token=token, add_to_git_credential=True)",
    "self.password = password",
    "token = self.current",
    "password=parts['password'],",
    "api_key = get_token()",
    'subject_token = os.environ.get("HF_OIDC_ID_TOKEN") or None',
    "secrets: dict[str, str | None] = field(default_factory=dict)",
    "password: SecretStr",
    "token: object,",
    "_TOKEN_HEX_LENGTH: Final[int] = 32",
    "OID_PRIVATE_KEY_USAGE_PERIOD = ExtensionOID.PRIVATE_KEY_USAGE_PERIOD",
    "GPG_KEY_ID=0x3AA5C34371567BD2 signs the tags",
    "partition key is tenant_id; the sort key is created_at",
    "password policy: at least 12 characters, checked at signup",
    "the password field is required on the signup form",
    "reset the password: click Forgot on the login page",
    "never put a password in a commit message",
    "the token bucket refills every second; rotate the token weekly",
    "token_budget: 2000",
    "max_tokens=4096",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer ${{ secrets.API_TOKEN }}",
    "the Authorization header carries a Bearer token",
    "use bearer authentication for the admin API",
    "curl -u alice https://api.example.com prompts for the password",
    'curl -u "$USER:$PASS" https://api.example.com',
    "curl -sSf https://example.com/install.sh -o install.sh",
    "docker login ghcr.io -u ci --password-stdin < token.txt",
    "docker run -p 8080:80 nginx",
    "sshpass is not installed on the runners",
    "mysql -p prompts for the password",
    "ssh -p 2222 deploy@10.0.0.5",
    "git clone ssh://git@github.com/acme/ledger.git or git@github.com:acme/ledger.git",
    "docs at https://docs.example.com:8443/api/v2?page=1#auth",
    "see https://example.com:8443/users/@alice for the profile",
    "email me at ops@example.com or page the on-call",
    "the api_key field is optional in the request body",
    "    secrets: inherit",
    "password: ${{ secrets.DB_PASSWORD }}",
    "set apiKey: ${API_KEY} in the compose file",
    "the sk- prefix marks OpenAI keys; ghp_ marks GitHub classic tokens",
    "hf_hub_download(repo_id, filename) caches under ~/.cache/huggingface",
    "SG. is SendGrid's key prefix",
    "ya29 is the prefix of a Google access token",
    "run `ruff check --fix` and `mypy --strict` before pushing",
    "AccountName=acme is the storage account; the key lives in Key Vault",
    "the pass rate is 98% on main",
    "bypass=true for the health check",
    "PWD=/home/alice/projects",
    "use-uv-for-python-environments and never-edit-applied-migrations",
    "the migration 20240101_add_users.sql runs first",
    "Node 20.11.1, npm 10.2.4; pnpm-lock.yaml is committed",
    "window.localStorage.getItem('theme') returns null on first load",
    "SELECT id, email FROM users WHERE created_at > now() - interval '7 days'",
    "base64 -d <<< aGVsbG8gd29ybGQ= prints hello world",
    "the key ring is in the drawer; the secret santa is on friday",
]


def test_the_plain_corpus_is_large() -> None:
    assert len(set(PLAIN)) == len(PLAIN) >= 50


@pytest.mark.parametrize("text", PLAIN)
def test_plain_developer_text_passes_unchanged(text: str) -> None:
    assert redact(text) == (text, 0)


def fixture_texts() -> list[Path]:
    return sorted(FIXTURES.rglob("*.md"))


def test_every_fixture_memory_body_passes_unchanged() -> None:
    """The memory files under fixtures/ (the eval set, the workspace, homes, importers) are
    ordinary memory text: none of them loses a character to redaction."""
    paths = fixture_texts()
    assert len(paths) >= 250
    changed = [str(p.relative_to(FIXTURES)) for p in paths if redact(p.read_text("utf-8"))[1]]
    assert changed == []


def visible(text: str) -> str:
    """`text` less the characters this file hides in secrets and every format character."""
    hidden = set(INVISIBLE.values())
    return "".join(ch for ch in text if ch not in hidden and unicodedata.category(ch) != "Cf")


SECRETS = [
    secret
    for kind, _, secret, _ in CORPUS[: KINDS.index("jwt") + 1]
    if kind != "aws-secret-access-key"  # a secret by its key, not its shape
]
"""The tokens known by their shape alone, wherever they stand."""
PIECES = st.one_of(
    st.sampled_from(SECRETS),
    st.sampled_from(PLAIN),
    st.sampled_from(
        [
            "password=",
            "token:",
            "<private>",
            "</private>",
            "Bearer",
            "@",
            "://",
            "=",
            "\U0001f468\u200d\U0001f469",
        ]
    ),
    st.text(alphabet=ALNUM + " _-.:/=@", max_size=12),
)


@st.composite
def hidden_text(draw: st.DrawFn) -> str:
    """Pieces joined by a space, a line break or a comma, with invisible characters dropped
    inside them at random."""
    pieces = []
    for piece in draw(st.lists(PIECES, min_size=1, max_size=8)):
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.integers(0, len(piece)))
            piece = piece[:at] + draw(st.sampled_from(list(INVISIBLE.values()))) + piece[at:]
        pieces.append(piece + draw(st.sampled_from([" ", "\n", ", "])))
    return "".join(pieces)


@settings(
    max_examples=max(1, int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "60"))),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(hidden_text())
def test_invisible_characters_never_change_what_is_redacted(text: str) -> None:
    """What a reader sees of the output is the redaction of what a reader sees of the input,
    and no secret put in whole (invisible characters aside) keeps either half."""
    cleaned, count = redact(text)
    assert (visible(cleaned), count) == redact(visible(text))
    shown = visible(cleaned)
    for secret in SECRETS:
        if secret in visible(text) and "<private>" not in visible(text):
            assert secret[: len(secret) // 2] not in shown and secret[len(secret) // 2 :] not in shown
