"""The token shapes redaction knows by their prefix (store/safety/redact.py says why a table of our own).

One row per kind, named by its gitleaks rule id where gitleaks has the kind (gitleaks'
config/gitleaks.toml is the reference; its rules were checked on 2026-12-01 against
b58d3f1). Only the rules that recognise a token by its own shape are ported: gitleaks' keyword
rules (`<vendor> … = <value>` with an entropy floor) are covered here by the assignment rules
in store/safety/redact.py, which need no vendor name. Each pattern matches the whole token, which
becomes `[REDACTED]`; `(?![\\w-])` ends a token that may hold `-`. The patterns are joined into
one alternation behind `(?<![\\w-])` (a token starts a word), so they cost one pass over the
text, not one each (a pattern that starts with an assertion scans every position).
"""

from __future__ import annotations

from typing import Final

_END: Final = r"(?![\w-])"

TOKENS: Final[tuple[tuple[str, str], ...]] = (
    ("mailgun-api-key", r"key-[0-9a-z]{32}\b"),
    (
        "1password-secret-key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}\b",
    ),
    ("1password-service-account-token", r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}"),
    ("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    ("alibaba-access-key-id", r"LTAI[A-Za-z0-9]{20}\b"),
    ("anthropic-api-key / openai-api-key", r"sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}\b"),
    ("artifactory-api-key", r"AKCp[A-Za-z0-9]{69}\b"),
    ("atlassian-api-token", r"ATATT3[\w=-]{180,}"),
    ("aws-access-token", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("aws-amazon-bedrock-api-key", r"ABSK[A-Za-z0-9+/]{109,269}={0,2}"),
    ("azure-ad-client-secret", r"(?<![\w~.-])[\w~.]{3}\dQ~[\w~.-]{31,34}(?![\w~.-])"),
    ("clojars-api-token", r"CLOJARS_[a-z0-9]{60}\b"),
    ("cloudflare-origin-ca-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b"),
    ("databricks-api-token", r"dapi[a-f0-9]{32}(?:-\d)?\b"),
    ("digitalocean-pat / -access-token / -refresh-token", r"do[opr]_v1_[a-f0-9]{64}\b"),
    ("doppler-api-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}\b"),
    ("duffel-api-token", r"duffel_(?:test|live)_[\w=-]{43}"),
    ("dynatrace-api-token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b"),
    ("easypost-api-token", r"EZ[AT]K[A-Za-z0-9]{54}\b"),
    ("flyio-access-token", r"(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})"),
    ("frameio-api-token", r"fio-u-[\w=-]{64}"),
    ("gcp-api-key", r"AIza[\w-]{35}" + _END),
    ("github-fine-grained-pat", r"github_pat_\w{22,255}\b"),
    ("github-pat / -oauth / -app-token / -refresh-token", r"gh[pousr]_[A-Za-z0-9]{36,255}\b"),
    (
        "gitlab-pat / -rrt / -runner / -deploy / -cicd-job / -ptt / -feed / -mail / -agent / -oauth / -scim",
        r"(?:gl(?:pat|rt|dt|cbt|ptt|ft|imt|agent|oas|soat|ffct)-|GR1348941)[\w-]{20,}(?:\.[\w-]+)?",
    ),
    ("google-oauth-client-secret", r"GOCSPX-[\w-]{20,}"),
    ("google-oauth-access-token", r"ya29\.[\w-]{20,}"),
    ("google-oauth-refresh-token", r"(?<![\w/])1//0[\w-]{30,}"),
    ("grafana-service-account-token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b"),
    ("grafana-cloud-api-token", r"glc_[A-Za-z0-9+/]{32,}={0,3}"),
    ("grafana-api-key", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}"),
    ("hashicorp-tf-api-token", r"[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}"),
    ("heroku-api-key-v2", r"HRKU-AA[\w-]{58}"),
    ("huggingface-access-token / -organization-api-token", r"(?:hf|api_org)_[A-Za-z0-9]{30,}\b"),
    ("infracost-api-token", r"ico-[A-Za-z0-9]{32}\b"),
    ("jwt", r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"),
    ("linear-api-key", r"lin_api_[A-Za-z0-9]{40}\b"),
    ("mailchimp-api-key", r"[a-f0-9]{32}-us\d{1,2}\b"),
    ("maxmind-license-key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b"),
    (
        "new-relic-user-api-key / -insert-key / -browser-api-token",
        r"NR(?:AK-[A-Za-z0-9]{27}|II-[\w-]{32}|JS-[a-f0-9]{19})\b",
    ),
    ("notion-api-token", r"ntn_[0-9]{11}[A-Za-z0-9]{35}\b"),
    ("npm-access-token", r"npm_[A-Za-z0-9]{36}\b"),
    ("openshift-user-token", r"sha256~[\w-]{43}" + _END),
    ("perplexity-api-key", r"pplx-[A-Za-z0-9]{48}\b"),
    ("planetscale-api-token / -oauth-token / -password", r"pscale_(?:tkn|oauth|pw)_[\w=-]{32,64}"),
    ("postman-api-token", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}\b"),
    ("prefect-api-token", r"pnu_[A-Za-z0-9]{36}\b"),
    ("pulumi-api-token", r"pul-[a-f0-9]{40}\b"),
    ("pypi-upload-token", r"pypi-AgE[\w-]{50,}"),
    ("readme-api-token", r"rdme_[a-z0-9]{70}\b"),
    ("rubygems-api-token", r"rubygems_[a-f0-9]{48}\b"),
    ("scalingo-api-token", r"tk-us-[\w-]{48}"),
    ("sendgrid-api-token", r"SG\.[\w-]{16,32}\.[\w-]{16,64}"),
    ("sendinblue-api-token", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b"),
    ("sentry-user-token / -org-token", r"sntry[us]_[\w+/=]{40,}"),
    ("settlemint-*-access-token", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\b"),
    ("shippo-api-token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}\b"),
    (
        "shopify-access-token / -custom / -private-app / -shared-secret",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
    ),
    (
        "slack-bot / -user / -app / -config-access / -config-refresh / -legacy tokens",
        r"(?:xoxe\.xox[bp]|xox[abposre]|xapp)-[A-Za-z0-9-]{10,}",
    ),
    ("sourcegraph-access-token", r"sgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}\b"),
    ("square-access-token", r"sq0(?:atp|csp)-[\w-]{22,60}"),
    ("stripe-access-token", r"(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}\b"),
    ("stripe-webhook-secret", r"whsec_[A-Za-z0-9+/=]{20,}"),
    ("telegram-bot-api-token", r"\d{8,10}:AA[\w-]{33}" + _END),
    ("twilio-api-key", r"SK[0-9a-fA-F]{32}\b"),
    ("vault-service-token / -batch-token", r"hv[sb]\.[\w-]{90,}"),
)
"""(kind, pattern) for every token known by its shape; the kinds README.md lists."""

WEBHOOKS: Final[tuple[tuple[str, str], ...]] = (
    ("slack-webhook-url", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+"),
    ("discord-webhook-url", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]+"),
    ("microsoft-teams-webhook", r"https://[\w-]+\.webhook\.office\.com/webhookb2/[\w@/-]+"),
)
"""URLs that are credentials by themselves: the whole URL is redacted."""
