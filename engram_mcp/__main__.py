from engram_mcp.server import main

raise SystemExit(main())
