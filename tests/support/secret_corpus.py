"""Synthetic secrets, one per kind engram promises to redact (issue 19 item 7), each in the text
around which it is found: the redaction suites' corpus.

No committed line holds a literal that looks like a live secret: every token is assembled
here from its prefix and characters drawn deterministically from the kind's name.
"""

from __future__ import annotations

import hashlib
import string

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
