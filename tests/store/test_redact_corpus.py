"""The redaction corpus (issue 19 item 7): one synthetic example per kind engram promises to
redact, each redacted to exactly `[REDACTED]` with the text around it kept, also when an
invisible character (a zero-width joiner, …) sits inside the secret; and plain developer text,
including every memory body under fixtures/, that must come back unchanged.

No committed line holds a literal that looks like a live secret: every token is assembled
here from its prefix and characters drawn deterministically from the kind's name.
"""

from __future__ import annotations

import hashlib
import os
import string
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.safety.redact import MARK, redact
from tests.support.paths import FIXTURES

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
LOWER = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def fill(seed: str, n: int, alphabet: str = ALNUM) -> str:
    """`n` characters of `alphabet` drawn from the sha256 stream of `seed` (deterministic)."""
    out: list[str] = []
    block = seed.encode()
    while len(out) < n:
        block = hashlib.sha256(block).digest()
        out.extend(alphabet[b % len(alphabet)] for b in block)
    return "".join(out[:n])


def letters(seed: str, n: int) -> str:
    return fill(seed, n, string.ascii_lowercase)


def pem(label: str) -> str:
    lines = "\n".join(fill(f"{label}{i}", 64, B64) for i in range(4))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


def jwt() -> str:
    head = "eyJ" + fill("jwt-h", 33, URLSAFE)
    return f"{head}.eyJ{fill('jwt-p', 40, URLSAFE)}.{fill('jwt-s', 43, URLSAFE)}"


PASSWORD = "Zq9x" + fill("password", 10)
CORPUS: list[tuple[str, str, str, str]] = [
    # (kind, text before, the secret, text after): the expected output is before + MARK + after
    # provider tokens (gitleaks rule ids where gitleaks has the kind)
    ("aws-access-token", "the deploy key is ", "AKIA" + fill("aws", 16, UPPER), " for staging"),
    ("aws-sts-token", "session key ", "ASIA" + fill("sts", 16, UPPER), " expires"),
    ("aws-secret-access-key", "aws_secret_access_key = ", fill("awss", 40, B64), ""),
    ("github-pat", "push with ", "ghp_" + fill("ghp", 36), " from CI"),
    ("github-oauth", "oauth ", "gho_" + fill("gho", 36), "."),
    ("github-app-token", "app token ", "ghs_" + fill("ghs", 36), " rotates hourly"),
    ("github-refresh-token", "refresh ", "ghr_" + fill("ghr", 36), " kept"),
    ("github-fine-grained-pat", "token ", "github_pat_" + fill("ghf", 82, ALNUM + "_"), " expires in May"),
    ("gitlab-pat", "GitLab API uses ", "glpat-" + fill("glpat", 20, URLSAFE), " today"),
    ("gitlab-runner-authentication-token", "register with ", "glrt-" + fill("glrt", 20, URLSAFE), " once"),
    ("gitlab-deploy-token", "deploy token ", "gldt-" + fill("gldt", 20, URLSAFE), " pulls images"),
    ("gitlab-cicd-job-token", "job token ", "glcbt-" + fill("glcbt", 2) + "_" + fill("glcbt2", 20), " in CI"),
    ("gitlab-rrt", "runner registration ", "GR1348941" + fill("glrrt", 20, URLSAFE), " (legacy)"),
    ("gitlab-ptt", "trigger with ", "glptt-" + fill("glptt", 40, HEX), " on tag"),
    ("gitlab-feed-token", "feed ", "glft-" + fill("glft", 20, URLSAFE), " for RSS"),
    ("gitlab-oauth-app-secret", "app secret ", "gloas-" + fill("gloas", 64, URLSAFE), " set"),
    (
        "slack-bot-token",
        "bot posts with ",
        "xoxb-" + fill("xoxb", 12, "0123456789") + "-" + fill("xoxb2", 24),
        "",
    ),
    (
        "slack-user-token",
        "user ",
        "xoxp-" + fill("xoxp", 12, "0123456789") + "-" + fill("xoxp2", 30),
        " acts",
    ),
    (
        "slack-app-token",
        "socket mode needs ",
        "xapp-1-A"
        + fill("xapp", 10, UPPER)
        + "-"
        + fill("xapp2", 13, "0123456789")
        + "-"
        + fill("xapp3", 64, LOWER),
        " set",
    ),
    ("slack-config-refresh-token", "refresh with ", "xoxe-1-" + fill("xoxe", 146, UPPER), " daily"),
    ("slack-config-access-token", "config ", "xoxe.xoxp-1-" + fill("xoxec", 163, UPPER), " here"),
    ("stripe-access-token", "prod stripe key ", "sk_live_" + fill("stripe", 24), " (rotate)"),
    ("stripe-restricted-key", "restricted ", "rk_test_" + fill("rk", 24), " only"),
    ("stripe-webhook-secret", "verify webhooks with ", "whsec_" + fill("whsec", 32), " on receipt"),
    ("openai-api-key", "OpenAI key ", "sk-proj-" + fill("openai", 48, URLSAFE), " in the vault"),
    ("anthropic-api-key", "claude key ", "sk-ant-api03-" + fill("anthropic", 93, URLSAFE) + "AA", " set"),
    ("gcp-api-key", "maps key ", "AIza" + fill("gcp", 35, URLSAFE), " restricted to the app"),
    (
        "google-oauth-client-secret",
        "client secret is ",
        "GOCSPX-" + fill("gocspx", 28, URLSAFE),
        " for the web app",
    ),
    ("google-oauth-access-token", "use ", "ya29." + fill("ya29", 120, URLSAFE), " for the API"),
    ("google-oauth-refresh-token", "refresh token ", "1//0" + fill("g1", 60, URLSAFE), " kept"),
    ("huggingface-access-token", "download with ", "hf_" + fill("hf", 34, string.ascii_letters), " (read)"),
    (
        "huggingface-organization-api-token",
        "org token ",
        "api_org_" + fill("hforg", 34, string.ascii_letters),
        " x",
    ),
    ("pypi-upload-token", "twine uses ", "pypi-AgEIcHlwaS5vcmc" + fill("pypi", 70, URLSAFE), " to upload"),
    (
        "sendgrid-api-token",
        "mail via ",
        "SG." + fill("sg1", 22, URLSAFE) + "." + fill("sg2", 43, URLSAFE),
        " on prod",
    ),
    ("npm-access-token", "publish with ", "npm_" + fill("npm", 36), " from CI"),
    ("digitalocean-pat", "doctl auth ", "dop_v1_" + fill("do", 64, HEX), " done"),
    ("shopify-access-token", "shop ", "shpat_" + fill("shop", 32, HEX), " admin"),
    ("databricks-api-token", "workspace ", "dapi" + fill("dapi", 32, HEX), " for jobs"),
    (
        "age-secret-key",
        "age key ",
        "AGE-SECRET-KEY-1" + fill("age", 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
        "",
    ),
    ("vault-service-token", "VAULT token ", "hvs." + fill("hvs", 95, URLSAFE), " lease"),
    ("linear-api-key", "linear ", "lin_api_" + fill("linear", 40), " for the bot"),
    (
        "notion-api-token",
        "notion ",
        "ntn_" + fill("ntn", 11, "0123456789") + fill("ntn2", 35),
        " integration",
    ),
    ("postman-api-token", "postman ", "PMAK-" + fill("pmak", 24, HEX) + "-" + fill("pmak2", 34, HEX), " x"),
    ("doppler-api-token", "doppler ", "dp.pt." + fill("doppler", 43), " set"),
    ("sentry-user-token", "sentry ", "sntryu_" + fill("sentry", 64, HEX), " cli"),
    ("perplexity-api-key", "pplx ", "pplx-" + fill("pplx", 48), " set"),
    (
        "grafana-service-account-token",
        "grafana ",
        "glsa_" + fill("glsa", 32) + "_" + fill("glsa2", 8, HEX),
        " x",
    ),
    ("planetscale-api-token", "pscale ", "pscale_tkn_" + fill("pscale", 43, URLSAFE), " set"),
    ("rubygems-api-token", "gem push with ", "rubygems_" + fill("gem", 48, HEX), " ok"),
    ("pulumi-api-token", "pulumi ", "pul-" + fill("pulumi", 40, HEX), " set"),
    ("heroku-api-key-v2", "heroku ", "HRKU-AA" + fill("heroku", 58, URLSAFE), " set"),
    ("atlassian-api-token", "jira ", "ATATT3" + fill("atlassian", 186, URLSAFE), " set"),
    ("sendinblue-api-token", "brevo ", "xkeysib-" + fill("sib", 64, HEX) + "-" + fill("sib2", 16), " set"),
    (
        "telegram-bot-api-token",
        "bot ",
        fill("tg", 10, "0123456789") + ":AA" + fill("tg2", 33, URLSAFE),
        " polls",
    ),
    ("twilio-api-key", "twilio ", "SK" + fill("twilio", 32, HEX), " sends SMS"),
    ("alibaba-access-key-id", "aliyun ", "LTAI" + fill("ali", 20), " set"),
    ("azure-ad-client-secret", "app secret ", fill("aad", 3) + "8Q~" + fill("aad2", 34), " expires"),
    ("jwt", "session cookie ", jwt(), " decoded fine"),
    # private keys of every armour kind
    ("private-key-pem", "key below\n", pem("RSA PRIVATE KEY"), "\nend of key"),
    ("private-key-openssh", "deploy key:\n", pem("OPENSSH PRIVATE KEY"), "\n"),
    ("private-key-pgp", "signing key:\n", pem("PGP PRIVATE KEY BLOCK"), "\nkeep it safe"),
    (
        "private-key-ssh2",
        "old key:\n",
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n"
        + fill("ssh2", 64, B64)
        + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----",
        "\n",
    ),
    (
        "private-key-putty",
        "putty:\n",
        "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n"
        + fill("putty", 44, B64)
        + "\nPrivate-MAC: "
        + fill("mac", 64, HEX),
        "\n",
    ),
    # credentials in URLs, webhook URLs
    ("url-password", "DATABASE_URL is postgres://", "billing:" + PASSWORD, "@db.internal:5432/app"),
    ("url-password-no-user", "cache at redis://", ":" + PASSWORD, "@cache.internal:6379/0"),
    ("url-password-with-at", "use mongodb://", "admin:p@" + PASSWORD, "@mongo.internal/admin"),
    (
        "slack-webhook-url",
        "alerts post to ",
        "https://hooks.slack.com/services/T"
        + fill("sw1", 8, UPPER)
        + "/B"
        + fill("sw2", 8, UPPER)
        + "/"
        + fill("sw3", 24),
        " on failure",
    ),
    (
        "discord-webhook-url",
        "notify ",
        "https://discord.com/api/webhooks/" + fill("dw", 18, "0123456789") + "/" + fill("dw2", 68, URLSAFE),
        " on deploy",
    ),
    (
        "microsoft-teams-webhook",
        "teams: ",
        "https://acme.webhook.office.com/webhookb2/"
        + fill("tw", 36, HEX)
        + "@"
        + fill("tw2", 36, HEX)
        + "/IncomingWebhook/"
        + fill("tw3", 32, HEX),
        " (channel)",
    ),
    # HTTP credentials
    ("authorization-basic", "Authorization: Basic ", fill("basic", 28, B64) + "==", ""),
    ("authorization-bearer", "Authorization: Bearer ", PASSWORD + "abcdEFGH", ""),
    ("authorization-bearer-all-letters", "Authorization: Bearer ", letters("bearer", 40), ""),
    (
        "authorization-bearer-all-letters-curl",
        'curl -H "Authorization: Bearer ',
        letters("bearer2", 32),
        '" https://api.example.com',
    ),
    ("authorization-token", "Authorization: token ", letters("tokenhdr", 24), " for the API"),
    ("bare-bearer", "send Bearer ", fill("bare", 32), " with each call"),
    ("netrc", "machine api.example.com login bob password ", PASSWORD, ""),
    ("netrc-split", "machine api.example.com\n  login bob\n  password ", PASSWORD, ""),
    # command lines
    ("mysql-p", "mysql -u root -p", PASSWORD, " billing"),
    ("curl-auth-user", "curl -u alice:", PASSWORD, " https://api.example.com/v1/me"),
    ("curl-auth-user-long", "curl -sS --user 'deploy:", PASSWORD, "' https://ci.example.com"),
    ("curl-auth-user-equals", "curl --user=bot:", PASSWORD, " -X POST https://x.example.com"),
    ("docker-login-p", "docker login -u ci -p ", PASSWORD, " registry.example.com"),
    ("docker-login-password", "docker login --password=", PASSWORD, " --username ci ghcr.io"),
    ("podman-login-p", "podman login -u ci -p ", PASSWORD, " quay.io"),
    ("sshpass-p", "sshpass -p ", PASSWORD, " ssh deploy@10.0.0.5"),
    ("sshpass-p-tight", "sshpass -p'", PASSWORD, "' scp a.tar b:"),
    ("cli-password-flag", "psql --password=", PASSWORD, " -h db"),
    # connection strings
    (
        "azure-storage-account-key",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=",
        fill("azure", 86, B64) + "==",
        ";EndpointSuffix=core.windows.net",
    ),
    (
        "azure-shared-access-key",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=",
        fill("sas", 43, B64) + "=",
        "",
    ),
    (
        "azure-sas-signature",
        "https://acme.blob.core.windows.net/c?sv=2024-11-04&sig=",
        fill("sig", 43, B64) + "%3D",
        "&se=2027-01-01",
    ),
    # assignments to secret-named keys
    ("env-api-key", "API_KEY=", fill("envapi", 16, LOWER), ""),
    ("env-key-suffix", "ENCRYPTION_KEY=", fill("enc", 32, HEX), ""),
    ("env-key-suffix-export", "export MAPBOX_KEY=", "pk." + fill("mapbox", 40), ""),
    ("env-key-suffix-quoted", 'OPENAI_KEY="', fill("openaikey", 24), '"'),
    ("env-db-pass", "DB_PASS=", PASSWORD, ""),
    ("env-mysql-pwd", "MYSQL_PWD=", PASSWORD, ""),
    ("env-export-password", 'export DB_PASSWORD="', PASSWORD, '"'),
    ("env-secret-colon", "STRIPE_WEBHOOK_SECRET: ", fill("sws", 20), ""),
    ("yaml-password", "  password: ", PASSWORD, ""),
    ("json-client-secret", '{"clientSecret": "', PASSWORD, '"}'),
    ("yaml-camel-db-password", "dbPassword: ", PASSWORD, ""),
    ("code-github-token", "githubToken=", PASSWORD, ""),
    ("run-together-password", "dbpassword=", PASSWORD, ""),
    ("mid-line-password", "the staging password: ", PASSWORD, " until friday"),
]
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
