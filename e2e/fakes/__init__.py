"""Scripted model endpoints, one module per wire API, all sharing one `Script`."""
