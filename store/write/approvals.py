"""Approval tokens and `pending-approvals.json` (SPEC §4.2).

The rest, and why: docs/design.md, `store/write/approvals.py`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from store.errors import Next, TokenRefused
from store.files import sealed
from store.files.fsutil import read_regular
from store.safety import untrusted

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
WHERE: Final = ("agent", "cli", "dialog", "ui")
"""Where a candidate was decided: the agent's commit tool (after the host's prompt), the CLI
(`engram commit`, the `engram pending` walk), the host's approval dialog, `engram ui`."""
DECIDED: Final = ("written", "declined", "deferred")
"""The states a decided candidate can have; any other candidate is `pending`."""
_DECLINED_WHERE: Final = {
    "dialog": "in the approval dialog",
    "cli": "at the terminal (engram pending)",
    "ui": "in engram ui",
}


def states(record: Mapping[str, Any]) -> dict[int, str]:
    """Each candidate's state by its number: `pending` unless the record's `decided` holds one
    of DECIDED for it."""
    decided = record.get("decided")
    found = decided if isinstance(decided, dict) else {}
    out: dict[int, str] = {}
    candidates = record.get("candidates")
    for c in candidates if isinstance(candidates, list) else ():
        n = c.get("n") if isinstance(c, dict) else None
        if isinstance(n, int) and not isinstance(n, bool):
            entry = found.get(str(n))
            state = entry.get("state") if isinstance(entry, dict) else None
            out[n] = state if state in DECIDED else "pending"
    return out


def waiting_part(record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a record holding only its pending candidates (their numbers kept): what is
    still waiting. Not the sealed record: its tag covers the whole one."""
    pending = {n for n, state in states(record).items() if state == "pending"}
    candidates = record.get("candidates")
    kept = [
        c
        for c in (candidates if isinstance(candidates, list) else ())
        if isinstance(c, dict) and c.get("n") in pending
    ]
    return {**record, "candidates": kept}


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

    def decide(self, hashed: str, decisions: Mapping[int, str], where: str, now: float) -> None:
        """Record candidates' states (each one of DECIDED) and where they were decided (one of
        WHERE), re-tagged; the proposal closes when no candidate is left pending: `declined`
        when every candidate was declined, else `used`."""
        if where not in WHERE or any(state not in DECIDED for state in decisions.values()):
            raise ValueError(f"not a decision engram records: {where!r} {dict(decisions)!r}")
        record = self.records[hashed]
        decided = record.get("decided")
        decided = dict(decided) if isinstance(decided, dict) else {}
        for n, state in sorted(decisions.items()):
            decided[str(n)] = {"state": state, "where": where, "at": int(now)}
        record["decided"] = decided
        found = states(record)
        if all(state != "pending" for state in found.values()):
            record["status"] = "declined" if all(s == "declined" for s in found.values()) else "used"
        record["tag"] = integrity_tag(self.key(), hashed, record)

    def open_count(self, now: float) -> int:
        return len(self.open(now))

    def open(self, now: float) -> list[tuple[str, dict[str, Any]]]:
        """(token hash, what still waits) of every proposal still waiting, oldest first (then by
        hash): each record as `waiting_part` gives it, holding only its pending candidates (a
        partly approved proposal lists what is left, under the numbers first shown). The sealed
        records stay in `records`."""
        waiting = [
            (k, waiting_part(r))
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
        if key not in self.records:
            raise TokenRefused(
                "ENGRAM_TOKEN_UNKNOWN",
                "unknown approval token (never issued here, or long gone); ",
                AGAIN,
            )
        return key, self.checked(key, now)

    def named(self, ref: str, now: float) -> tuple[str, dict[str, Any]]:
        """(token hash, record) of a committable proposal named by its token's hash or the first
        12 or more hex digits of it (`engram pending` shows them): how the human's own surfaces
        (the terminal walk, engram ui) name a proposal without its token. TokenRefused as `check`."""
        wanted = ref.strip().lower()
        if not (12 <= len(wanted) <= 64 and all(ch in "0123456789abcdef" for ch in wanted)):
            raise TokenRefused(
                "ENGRAM_TOKEN_UNKNOWN",
                f"{untrusted.line(ref, 40)!r} names no proposal: give its token, or its ref as `engram pending` "
                "lists it (12 hex digits)",
            )
        found = sorted(k for k in self.records if k.startswith(wanted))
        if len(found) != 1:
            raise TokenRefused(
                "ENGRAM_TOKEN_UNKNOWN",
                f"no proposal {wanted[:12]} here (never made here, or long gone): `engram pending` lists "
                "the waiting ones"
                if not found
                else f"{wanted} names {len(found)} proposals: give more of its digits, or its token",
            )
        return found[0], self.checked(found[0], now)

    def checked(self, key: str, now: float) -> dict[str, Any]:
        """The record under `key` if it is intact, waiting and not expired; else TokenRefused."""
        record = self.records[key]
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
            raise TokenRefused("ENGRAM_DECLINED", f"approval was declined {_declined_where(record)}; ", AGAIN)
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
        return record

    def _expected(self, hashed: str, record: dict[str, Any]) -> str:
        try:
            return integrity_tag(self.key(), hashed, record)
        except (TypeError, orjson.JSONEncodeError):
            return ""


def _declined_where(record: Mapping[str, Any]) -> str:
    """Where a declined proposal was declined (the dialog's words for one recorded before the review page existed)."""
    decided = record.get("decided")
    wheres = sorted(
        {str(d.get("where")) for d in decided.values() if isinstance(d, dict)}
        if isinstance(decided, dict)
        else set()
    )
    return " and ".join(_DECLINED_WHERE.get(w, "by the human") for w in wheres) or _DECLINED_WHERE["dialog"]


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
