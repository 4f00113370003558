from engram_mcp.cli.main import main

raise SystemExit(main())
