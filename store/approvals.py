"""Approval tokens and `pending-approvals.json` (SPEC §4.2).

A token is random (192 bits), carries a fingerprint of its workspace, and is shown once;
the file keeps only its sha256, the proposal, and an integrity tag (HMAC keyed by the token
itself) over the candidates, so editing a pending candidate makes its commit fail.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from store.errors import StoreError

TOKEN_TTL_SECONDS: Final = 30 * 60
KEEP_SECONDS: Final = 24 * 3600
"""Used, declined and expired proposals are remembered this long, so their refusal says why."""
_PREFIX: Final = "engram-"


class TokenRefused(StoreError):
    """A commit refused before anything was written; `code` says which refusal."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]


def fingerprint(workspace: Path) -> str:
    return hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:8]


def mint(workspace: Path) -> str:
    return f"{_PREFIX}{fingerprint(workspace)}-{secrets.token_urlsafe(24)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def integrity_tag(token: str, record: dict[str, Any]) -> str:
    core = {k: record[k] for k in ("created", "expires", "origin", "candidates", "redactions")}
    return hmac.new(
        token.encode(), orjson.dumps(core, option=orjson.OPT_SORT_KEYS), hashlib.sha256
    ).hexdigest()


@dataclass(slots=True)
class Pending:
    """The parsed pending file; `records` is keyed by token hash."""

    records: dict[str, dict[str, Any]]

    @classmethod
    def read(cls, path: Path) -> Pending:
        try:
            data = orjson.loads(path.read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            return cls({})
        proposals = data.get("proposals") if isinstance(data, dict) else None
        return cls(
            {k: v for k, v in proposals.items() if isinstance(v, dict)} if isinstance(proposals, dict) else {}
        )

    def render(self, now: float) -> bytes:
        kept = {
            k: v
            for k, v in self.records.items()
            if isinstance(v.get("expires"), int | float) and v["expires"] + KEEP_SECONDS > now
        }
        return orjson.dumps(
            {"version": 1, "proposals": kept}, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
        )

    def add(self, token: str, record: dict[str, Any]) -> None:
        record["tag"] = integrity_tag(token, record)
        self.records[token_hash(token)] = record

    def open_count(self, now: float) -> int:
        return sum(
            1 for r in self.records.values() if r.get("status") == "pending" and r.get("expires", 0) > now
        )

    def check(self, token: object, workspace: Path, now: float) -> tuple[str, dict[str, Any]]:
        """(token hash, record) of a committable proposal, or TokenRefused saying why not."""
        if not isinstance(token, str) or not token.startswith(_PREFIX) or token.count("-") < 2:
            raise TokenRefused("ENGRAM_TOKEN_UNKNOWN", "that is not an engram approval token; propose again")
        if token.split("-")[1] != fingerprint(workspace):
            raise TokenRefused(
                "ENGRAM_TOKEN_WORKSPACE",
                "this approval token belongs to another workspace; commit it there, or propose again here",
            )
        key = token_hash(token)
        record = self.records.get(key)
        if record is None:
            raise TokenRefused(
                "ENGRAM_TOKEN_UNKNOWN",
                "unknown approval token (never issued here, or long gone); propose again",
            )
        try:
            intact = hmac.compare_digest(str(record.get("tag", "")), integrity_tag(token, record))
        except KeyError:
            intact = False
        if not intact:
            raise TokenRefused(
                "ENGRAM_INTEGRITY",
                "the pending proposal was edited after it was made (pending-approvals.json); propose again",
            )
        status = record.get("status")
        if status == "used":
            raise TokenRefused("ENGRAM_TOKEN_USED", "this approval token was already used; propose again")
        if status == "declined":
            raise TokenRefused(
                "ENGRAM_DECLINED", "approval was declined in the approval dialog; propose again"
            )
        if record["expires"] <= now:
            raise TokenRefused(
                "ENGRAM_TOKEN_EXPIRED", "this approval token expired (tokens last 30 minutes); propose again"
            )
        return key, record
