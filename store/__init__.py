"""The memory store: markdown files are canonical; indexes are derived and rebuildable.

Knows nothing about MCP or JSON-RPC. Entry point: `store.store.Store.open(...)`.
"""
