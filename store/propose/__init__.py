"""What an agent or a person proposes, before anything is written: candidates checked and redacted, text mined for them, and each one's verdict against the memories there are."""
