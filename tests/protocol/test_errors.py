"""Every wire error code is pinned to the value the MCP and JSON-RPC specifications give it."""

from __future__ import annotations

import pytest

from protocol import errors

EXPECTED = {
    errors.ParseError: -32700,
    errors.InvalidRequest: -32600,
    errors.MethodNotFound: -32601,
    errors.InvalidParams: -32602,
    errors.InternalError: -32603,
    errors.ResourceNotFound: -32002,
    errors.MissingClientCapability: -32021,
    errors.UnsupportedVersion: -32022,
}


@pytest.mark.parametrize("cls", list(EXPECTED), ids=lambda c: c.__name__)
def test_error_class_carries_its_specified_code(cls: type[errors.RpcError]) -> None:
    """Spec-mandated numbers (python-lsp-jsonrpc once shipped -32602 as internal error)."""
    assert cls.code == EXPECTED[cls]
    assert cls("m", data={"x": 1}).to_wire() == {"code": EXPECTED[cls], "message": "m", "data": {"x": 1}}


def test_named_constants_match_the_classes() -> None:
    """Spec-mandated: constants and classes cannot drift apart."""
    assert (errors.PARSE_ERROR, errors.INVALID_REQUEST, errors.METHOD_NOT_FOUND) == (-32700, -32600, -32601)
    assert (errors.INVALID_PARAMS, errors.INTERNAL_ERROR, errors.RESOURCE_NOT_FOUND) == (
        -32602,
        -32603,
        -32002,
    )
    assert (errors.MISSING_CLIENT_CAPABILITY, errors.UNSUPPORTED_PROTOCOL_VERSION) == (-32021, -32022)


def test_store_error_codes_are_stable() -> None:
    """engram's own contract (SPEC §11): the ENGRAM_* codes users and agents match on."""
    from store import errors as store_errors

    assert store_errors.InvalidId.code == "ENGRAM_VALIDATION"
    assert store_errors.NotFound.code == "ENGRAM_NOT_FOUND"
    assert store_errors.CorruptMemory.code == "ENGRAM_CORRUPT"
    assert store_errors.ConfigError.code == "ENGRAM_CONFIG"
    assert store_errors.Busy.code == "ENGRAM_BUSY"
