"""engram-mcp: local, git-friendly memory for AI coding agents, served over MCP."""

__version__ = "0.1.0"
