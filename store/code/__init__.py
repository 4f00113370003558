"""Code references and valid time: refs, staleness against the working tree, history, globs."""
