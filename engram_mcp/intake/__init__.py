"""What engram reads in from outside a store: other tools' memory files and hosts' session transcripts."""
