"""Text from a repository made safe: escaping, invisible characters, redaction, the note filter, the user key."""
