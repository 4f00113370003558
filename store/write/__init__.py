"""The write path: candidates, verdicts, proposals, approvals, commits, notes, settings, curation."""
