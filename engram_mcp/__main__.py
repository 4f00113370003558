from engram_mcp.mcp.server import main

raise SystemExit(main())
