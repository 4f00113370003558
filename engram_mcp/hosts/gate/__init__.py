"""The hosts' approval gates: the per-tool and shell rules link writes, and the audits of what would open them."""
