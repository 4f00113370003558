"""`make eval`: search quality on engram's own labelled set (fixtures/eval/), not a test."""
