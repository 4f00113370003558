"""`make hosts-e2e`: the real host CLIs against engram, each driven by a scripted model on loopback."""
