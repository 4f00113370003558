"""Host configuration editing for `engram link` / `engram unlink`."""
