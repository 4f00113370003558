"""The read path: a scope's catalog and its persisted index, routing, tiered loading, usage, arrivals."""
