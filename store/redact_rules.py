"""The token shapes redaction knows by their prefix (store/redact.py says why a table of our own).

One row per kind, named by its gitleaks rule id where gitleaks has the kind (gitleaks'
config/gitleaks.toml is the reference; its rules were checked on 2026-12-01 against
b58d3f1). Only the rules that recognise a token by its own shape are ported: gitleaks' keyword
rules (`<vendor> … = <value>` with an entropy floor) are covered here by the assignment rules
in store/redact.py, which need no vendor name. Each pattern matches the whole token, which
becomes `[REDACTED]`; `(?![\\w-])` ends a token that may hold `-`.
"""

from __future__ import annotations

from typing import Final

_END: Final = r"(?![\w-])"

TOKENS: Final[tuple[tuple[str, str], ...]] = (
    (
        "1password-secret-key",
        r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}\b",
    ),
    ("1password-service-account-token", r"\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}"),
    ("age-secret-key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    ("alibaba-access-key-id", r"\bLTAI[A-Za-z0-9]{20}\b"),
    ("anthropic-api-key / openai-api-key", r"\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}\b"),
    ("artifactory-api-key", r"\bAKCp[A-Za-z0-9]{69}\b"),
    ("atlassian-api-token", r"\bATATT3[\w=-]{180,}"),
    ("aws-access-token", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("aws-amazon-bedrock-api-key", r"\bABSK[A-Za-z0-9+/]{109,269}={0,2}"),
    ("azure-ad-client-secret", r"(?<![\w~.-])[\w~.]{3}\dQ~[\w~.-]{31,34}(?![\w~.-])"),
    ("clojars-api-token", r"\bCLOJARS_[a-z0-9]{60}\b"),
    ("cloudflare-origin-ca-key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b"),
    ("databricks-api-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b"),
    ("digitalocean-pat / -access-token / -refresh-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("doppler-api-token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}\b"),
    ("duffel-api-token", r"\bduffel_(?:test|live)_[\w=-]{43}"),
    ("dynatrace-api-token", r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b"),
    ("easypost-api-token", r"\bEZ[AT]K[A-Za-z0-9]{54}\b"),
    ("flyio-access-token", r"\b(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})"),
    ("frameio-api-token", r"\bfio-u-[\w=-]{64}"),
    ("gcp-api-key", r"\bAIza[\w-]{35}" + _END),
    ("github-fine-grained-pat", r"\bgithub_pat_\w{22,255}\b"),
    ("github-pat / -oauth / -app-token / -refresh-token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    (
        "gitlab-pat / -rrt / -runner / -deploy / -cicd-job / -ptt / -feed / -mail / -agent / -oauth / -scim",
        r"\b(?:gl(?:pat|rt|dt|cbt|ptt|ft|imt|agent|oas|soat|ffct)-|GR1348941)[\w-]{20,}(?:\.[\w-]+)?",
    ),
    ("google-oauth-client-secret", r"\bGOCSPX-[\w-]{20,}"),
    ("google-oauth-access-token", r"\bya29\.[\w-]{20,}"),
    ("google-oauth-refresh-token", r"(?<![\w/])1//0[\w-]{30,}"),
    ("grafana-service-account-token", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b"),
    ("grafana-cloud-api-token", r"\bglc_[A-Za-z0-9+/]{32,}={0,3}"),
    ("grafana-api-key", r"\beyJrIjoi[A-Za-z0-9]{70,400}={0,3}"),
    ("hashicorp-tf-api-token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}"),
    ("heroku-api-key-v2", r"\bHRKU-AA[\w-]{58}"),
    ("huggingface-access-token / -organization-api-token", r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}\b"),
    ("infracost-api-token", r"\bico-[A-Za-z0-9]{32}\b"),
    ("jwt", r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"),
    ("linear-api-key", r"\blin_api_[A-Za-z0-9]{40}\b"),
    ("mailchimp-api-key", r"\b[a-f0-9]{32}-us\d{1,2}\b"),
    ("maxmind-license-key", r"\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b"),
    (
        "new-relic-user-api-key / -insert-key / -browser-api-token",
        r"\bNR(?:AK-[A-Za-z0-9]{27}|II-[\w-]{32}|JS-[a-f0-9]{19})\b",
    ),
    ("notion-api-token", r"\bntn_[0-9]{11}[A-Za-z0-9]{35}\b"),
    ("npm-access-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("openshift-user-token", r"\bsha256~[\w-]{43}" + _END),
    ("perplexity-api-key", r"\bpplx-[A-Za-z0-9]{48}\b"),
    ("planetscale-api-token / -oauth-token / -password", r"\bpscale_(?:tkn|oauth|pw)_[\w=-]{32,64}"),
    ("postman-api-token", r"\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}\b"),
    ("prefect-api-token", r"\bpnu_[A-Za-z0-9]{36}\b"),
    ("pulumi-api-token", r"\bpul-[a-f0-9]{40}\b"),
    ("pypi-upload-token", r"\bpypi-AgE[\w-]{50,}"),
    ("readme-api-token", r"\brdme_[a-z0-9]{70}\b"),
    ("rubygems-api-token", r"\brubygems_[a-f0-9]{48}\b"),
    ("scalingo-api-token", r"\btk-us-[\w-]{48}"),
    ("sendgrid-api-token", r"\bSG\.[\w-]{16,32}\.[\w-]{16,64}"),
    ("sendinblue-api-token", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b"),
    ("sentry-user-token / -org-token", r"\bsntry[us]_[\w+/=]{40,}"),
    ("settlemint-*-access-token", r"\bsm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\b"),
    ("shippo-api-token", r"\bshippo_(?:live|test)_[a-fA-F0-9]{40}\b"),
    (
        "shopify-access-token / -custom / -private-app / -shared-secret",
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
    ),
    (
        "slack-bot / -user / -app / -config-access / -config-refresh / -legacy tokens",
        r"\b(?:xoxe\.xox[bp]|xox[abposre]|xapp)-[A-Za-z0-9-]{10,}",
    ),
    ("sourcegraph-access-token", r"\bsgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}\b"),
    ("square-access-token", r"\bsq0(?:atp|csp)-[\w-]{22,60}"),
    ("stripe-access-token", r"\b(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}\b"),
    ("stripe-webhook-secret", r"\bwhsec_[A-Za-z0-9+/=]{20,}"),
    ("telegram-bot-api-token", r"\b\d{8,10}:AA[\w-]{33}" + _END),
    ("twilio-api-key", r"\bSK[0-9a-fA-F]{32}\b"),
    ("vault-service-token / -batch-token", r"\bhv[sb]\.[\w-]{90,}"),
)
"""(kind, pattern) for every token known by its shape; the kinds README.md lists."""

WEBHOOKS: Final[tuple[tuple[str, str], ...]] = (
    ("slack-webhook-url", r"\bhttps://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+"),
    ("discord-webhook-url", r"\bhttps://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]+"),
    ("microsoft-teams-webhook", r"\bhttps://[\w-]+\.webhook\.office\.com/webhookb2/[\w@/-]+"),
)
"""URLs that are credentials by themselves: the whole URL is redacted."""
