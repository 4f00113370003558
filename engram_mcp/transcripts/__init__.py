"""Host session files for save-session: bounded reads and each host's format."""
