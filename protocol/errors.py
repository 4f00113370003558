"""JSON-RPC and MCP error codes, and the exceptions that are answered on the wire.

* RpcError                 base: answered as {"code", "message", "data"}
  - ParseError             -32700 the line is not JSON
  - InvalidRequest         -32600 not a valid request object (also: oversized line, bad batch)
  - MethodNotFound         -32601 unknown, removed, or not served in this era
  - InvalidParams          -32602 params do not fit (unknown tool, missing envelope key, bad state)
  - InternalError          -32603 a fault on our side; never carries a traceback
  - ResourceNotFound       -32002 legacy `resources/read` of an unknown URI
  - MissingClientCapability -32021 the request needs a capability its envelope did not declare
  - UnsupportedVersion     -32022 the modern envelope names a version we do not serve
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

PARSE_ERROR: Final = -32700
"""The line is not valid JSON."""
INVALID_REQUEST: Final = -32600
"""The JSON is not a valid JSON-RPC request, or the line exceeds the size limit."""
METHOD_NOT_FOUND: Final = -32601
"""Unknown method, or a method removed in the request's era."""
INVALID_PARAMS: Final = -32602
"""Params do not match what the method needs."""
INTERNAL_ERROR: Final = -32603
"""A server fault."""
RESOURCE_NOT_FOUND: Final = -32002
"""Legacy era only: `resources/read` of an unknown URI."""
MISSING_CLIENT_CAPABILITY: Final = -32021
"""2026-07-28: serving the request needs a capability the client did not declare."""
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
"""2026-07-28: the envelope's protocol version is not served."""


class RpcError(Exception):
    """An error that is answered on the wire; `code` is its JSON-RPC code."""

    code: ClassVar[int] = INTERNAL_ERROR

    def __init__(self, message: str, *, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(RpcError):
    code = PARSE_ERROR


class InvalidRequest(RpcError):
    code = INVALID_REQUEST


class MethodNotFound(RpcError):
    code = METHOD_NOT_FOUND


class InvalidParams(RpcError):
    code = INVALID_PARAMS


class InternalError(RpcError):
    code = INTERNAL_ERROR


class ResourceNotFound(RpcError):
    code = RESOURCE_NOT_FOUND


class MissingClientCapability(RpcError):
    code = MISSING_CLIENT_CAPABILITY


class UnsupportedVersion(RpcError):
    code = UNSUPPORTED_PROTOCOL_VERSION
