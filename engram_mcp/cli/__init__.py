"""`engram`, the command line (SPEC §7): its entry point is engram_mcp.cli.main."""
