"""SDK-free MCP over line-delimited JSON-RPC on stdio, both protocol eras.

Knows nothing about memory: the application hands a `ServerSpec` (tools, resources,
prompts, instructions) to `Server`, and this package does the wire.
"""
