"""`engram doctor`: the host files, the gates and this machine's health, as findings."""
