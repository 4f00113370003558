"""File primitives: the memory file format, ids, atomic writes, the lock, the workspace, the git runner."""
