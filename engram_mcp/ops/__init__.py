"""What each call does, shared by the MCP tools and the CLI: store calls in, Outcomes out."""
