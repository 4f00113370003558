"""`engram ui`: the human's own page for this workspace's memory, served on 127.0.0.1 only.

Nothing here is imported by `engram-mcp` or by any other `engram` command: the web stack
(werkzeug, jinja2, markdown-it-py, nh3) is the `ui` extra's, loaded when `engram ui` runs.
"""
