"""The MCP server: the wiring of both protocol eras to engram's tools, resources and prompts."""
