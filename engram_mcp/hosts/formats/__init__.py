"""The host config formats engram edits in place: JSONC, Codex's TOML, opencode's config."""
