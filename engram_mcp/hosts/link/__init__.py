"""`engram link` / `unlink` / `upgrade`: engram's entry, its command files and rule files in each host."""
