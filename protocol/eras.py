"""The two protocol eras as data, and the per-request era classifier (SPEC §6, PROTOCOL §4)."""

from __future__ import annotations

from enum import Enum
from typing import Any, Final


class Era(Enum):
    LEGACY = "legacy"
    MODERN = "modern"


LEGACY_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Handshake-era versions, oldest first; lexical order is chronological order."""
LATEST_LEGACY: Final = LEGACY_VERSIONS[-1]
MODERN_VERSIONS: Final = ("2026-07-28",)

META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"


def at_least(version: str, floor: str) -> bool:
    """True when the legacy `version` is `floor` or newer."""
    return LEGACY_VERSIONS.index(version) >= LEGACY_VERSIONS.index(floor)


def negotiate(requested: object) -> str:
    """The version `initialize` answers: the client's when we serve it, else the latest legacy."""
    return requested if isinstance(requested, str) and requested in LEGACY_VERSIONS else LATEST_LEGACY


def era_of(method: str, params: Any) -> Era:
    """Modern when `params._meta` carries the protocol-version key, except a real `initialize`."""
    if not isinstance(params, dict):
        return Era.LEGACY
    if method == "initialize" and "protocolVersion" in params:
        return Era.LEGACY
    meta = params.get("_meta")
    if isinstance(meta, dict) and META_VERSION in meta:
        return Era.MODERN
    return Era.LEGACY
