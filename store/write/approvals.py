"""Approval tokens and `pending-approvals.json` (SPEC §4.2).

A token is random (192 bits), carries a fingerprint of its workspace, and is shown once; the
file keeps only its sha256 and the proposal. Each proposal carries an integrity tag: an HMAC
keyed by the per-user secret (store.safety.user_key), not by the token, over its token hash and the
whole record (candidates, verdicts, status, expiry, origin, redactions). So editing a proposal
in the file — flipping `declined` back to `pending`, or swapping a body and recomputing a tag
with the token — makes its commit fail with ENGRAM_INTEGRITY, even for an agent holding the
token; engram's own status changes re-tag it. A proposal whose tag does not check (one that
came with a clone, or was edited) counts for nothing and is dropped at the next write.

The file is bounded: at most MAX_PROPOSALS proposals and MAX_BYTES bytes, oldest dropped first;
`render` reports how many still-open proposals that dropped, so the proposing call can say so.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from store.errors import Next, TokenRefused
from store.files import sealed
from store.files.fsutil import read_regular

TOKEN_TTL_SECONDS: Final = 30 * 60
KEEP_SECONDS: Final = 24 * 3600
"""Used, declined and expired proposals are remembered this long, so their refusal says why."""
MAX_PROPOSALS: Final = 50
MAX_BYTES: Final = 2 << 20
"""Caps of pending-approvals.json (oldest proposals dropped first)."""
_READ_LIMIT: Final = 8 * MAX_BYTES
"""A larger file is not engram's: it is read as empty (and replaced at the next write)."""
_PREFIX: Final = "engram-"
_KIND: Final = "proposal"
AGAIN: Final = Next("propose_again")
"""How a refused proposal is made afresh, in each surface's words."""


def fingerprint(workspace: Path) -> str:
    return hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:8]


def mint(workspace: Path) -> str:
    return f"{_PREFIX}{fingerprint(workspace)}-{secrets.token_urlsafe(24)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def integrity_tag(key: bytes, hashed: str, record: dict[str, Any]) -> str:
    """The HMAC (per-user secret) over a token hash and every field of its record but `tag`."""
    core = {k: v for k, v in record.items() if k != "tag"}
    return sealed.tag(key, _KIND, hashed.encode() + b"\0" + orjson.dumps(core, option=orjson.OPT_SORT_KEYS))


def _intact(key: bytes, hashed: str, record: dict[str, Any]) -> bool:
    try:
        expected = integrity_tag(key, hashed, record)
    except (TypeError, orjson.JSONEncodeError):
        return False
    return sealed.matches(record.get("tag"), expected)


@dataclass(slots=True)
class Pending:
    """The parsed pending file; `records` is keyed by token hash. `key` gives the per-user
    secret (asked for only when a record is checked or tagged)."""

    records: dict[str, dict[str, Any]]
    key: Callable[[], bytes] = field(default=lambda: b"")
    dropped: int = 0
    """Open proposals the last `render` dropped to stay within the caps."""
    fresh: set[str] = field(default_factory=set)
    """Proposals added by this process: newest of all, never dropped for an older one."""

    @classmethod
    def read(cls, path: Path, key: Callable[[], bytes]) -> Pending:
        try:
            data = orjson.loads(read_regular(path, _READ_LIMIT))
        except (OSError, orjson.JSONDecodeError):
            return cls({}, key)
        proposals = data.get("proposals") if isinstance(data, dict) else None
        return cls(
            {k: v for k, v in proposals.items() if isinstance(v, dict)}
            if isinstance(proposals, dict)
            else {},
            key,
        )

    def intact(self, hashed: str) -> bool:
        record = self.records.get(hashed)
        return record is not None and _intact(self.key(), hashed, record)

    def render(self, now: float) -> bytes:
        """The file: intact records not long expired, re-tagged, within the caps: open proposals
        first, then newest first. A closed record (used, declined, cancelled, expired: kept only
        so its refusal says why) never evicts an open one; `created` is whole seconds, so newest
        alone would let many writers' used records of the same second evict a waiting proposal."""
        key = self.key()
        kept = [
            (k, v)
            for k, v in self.records.items()
            if isinstance(v.get("expires"), int | float)
            and v["expires"] + KEEP_SECONDS > now
            and _intact(key, k, v)
        ]
        kept.sort(
            key=lambda kv: (
                kv[0] not in self.fresh,
                not (kv[1].get("status") == "pending" and _number(kv[1].get("expires")) > now),
                -_number(kv[1].get("created")),
                kv[0],
            )
        )
        chosen: dict[str, dict[str, Any]] = {}
        size = 0
        self.dropped = 0
        for hashed, record in kept:
            record_size = len(orjson.dumps(record)) + 80
            if chosen and (len(chosen) >= MAX_PROPOSALS or size + record_size > MAX_BYTES):
                self.dropped += record.get("status") == "pending" and _number(record.get("expires")) > now
                continue
            chosen[hashed] = record
            size += record_size
        self.records = chosen
        return orjson.dumps(
            {"version": 2, "proposals": chosen}, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
        )

    def add(self, token: str, record: dict[str, Any]) -> None:
        hashed = token_hash(token)
        record["tag"] = integrity_tag(self.key(), hashed, record)
        self.records[hashed] = record
        self.fresh.add(hashed)

    def set_status(self, hashed: str, status: str) -> None:
        """engram's own status change (used, declined), re-tagged."""
        record = self.records[hashed]
        record["status"] = status
        record["tag"] = integrity_tag(self.key(), hashed, record)

    def open_count(self, now: float) -> int:
        return len(self.open(now))

    def open(self, now: float) -> list[tuple[str, dict[str, Any]]]:
        """(token hash, record) of every proposal still waiting, oldest first (then by hash)."""
        waiting = [
            (k, r)
            for k, r in self.records.items()
            if r.get("status") == "pending" and _number(r.get("expires")) > now and self.intact(k)
        ]
        return sorted(waiting, key=lambda kr: (_number(kr[1].get("created")), kr[0]))

    def check(self, token: object, workspace: Path, now: float) -> tuple[str, dict[str, Any]]:
        """(token hash, record) of a committable proposal, or TokenRefused saying why not."""
        if not isinstance(token, str) or not token.startswith(_PREFIX) or token.count("-") < 2:
            raise TokenRefused("ENGRAM_TOKEN_UNKNOWN", "that is not an engram approval token; ", AGAIN)
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
                "unknown approval token (never issued here, or long gone); ",
                AGAIN,
            )
        if not hmac.compare_digest(
            sealed.found_bytes(record.get("tag")), self._expected(key, record).encode()
        ):
            raise TokenRefused(
                "ENGRAM_INTEGRITY",
                "the pending proposal was edited after it was made, or was not made by this user's engram "
                "(pending-approvals.json); nothing was written; ",
                AGAIN,
            )
        status = record.get("status")
        if status == "used":
            raise TokenRefused("ENGRAM_TOKEN_USED", "this approval token was already used; ", AGAIN)
        if status == "declined":
            raise TokenRefused("ENGRAM_DECLINED", "approval was declined in the approval dialog; ", AGAIN)
        if status == "cancelled":
            raise TokenRefused(
                "ENGRAM_DECLINED",
                "this proposal was cancelled (engram pending --cancel); ",
                AGAIN,
            )
        if _number(record.get("expires")) <= now:
            raise TokenRefused(
                "ENGRAM_TOKEN_EXPIRED", "this approval token expired (tokens last 30 minutes); ", AGAIN
            )
        return key, record

    def _expected(self, hashed: str, record: dict[str, Any]) -> str:
        try:
            return integrity_tag(self.key(), hashed, record)
        except (TypeError, orjson.JSONEncodeError):
            return ""


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
