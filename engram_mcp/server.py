"""`engram-mcp`: the stdio MCP server. Flags are documented in `--help` and the README."""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from store.store import Store

USAGE = """\
usage: engram-mcp [--workspace DIR] [--read-only] [--no-elicitation] [--always-load]

Serve engram memory over MCP on stdin/stdout (both protocol eras). Logs go to stderr.

options:
  --workspace DIR    use DIR as the workspace (default: $ENGRAM_WORKSPACE, else the nearest
                     folder holding .engram/, else the git root, else the current folder)
  --read-only        list no write tools and count no usage (also ENGRAM_READ_ONLY=1)
  --no-elicitation   never ask in the host's dialog; always use the approval-token flow
  --always-load      mark engram_load with _meta["anthropic/alwaysLoad"] for Claude Code
  --version          print the version and exit
  -h, --help         print this help and exit

environment: ENGRAM_WORKSPACE, ENGRAM_HOME, ENGRAM_READ_ONLY, ENGRAM_SESSION_OBJECTIVE, ENGRAM_LOG,
             ENGRAM_ELICITATION_TIMEOUT, ENGRAM_VECTORS, ENGRAM_NOW
"""

_TRUE = ("1", "true", "yes", "on")


def _parse(argv: Sequence[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-h", "--help"):
            options["help"] = True
        elif arg == "--version":
            options["version"] = True
        elif arg in ("--read-only", "--no-elicitation", "--always-load"):
            options[arg[2:].replace("-", "_")] = True
        elif arg == "--workspace" and args:
            options["workspace"] = args.pop(0)
        elif arg.startswith("--workspace="):
            options["workspace"] = arg.split("=", 1)[1]
        else:
            print(f"engram-mcp: ignoring unknown option {arg!r} (see --help)", file=sys.stderr)
    return options


def _seconds(value: str, default: float) -> float:
    try:
        seconds = float(value)
    except ValueError:
        return default
    return seconds if 0 < seconds <= 3600 else default


class _FirstReply:
    """The wire's stdout, noting when the first reply (the handshake's) has gone out."""

    def __init__(self, stream: IO[bytes], sent: threading.Event) -> None:
        self._stream, self._sent = stream, sent

    def write(self, data: bytes) -> int:
        written = self._stream.write(data)
        self._sent.set()
        return written

    def flush(self) -> None:
        self._stream.flush()


def _warm(store: Store, imported: threading.Event, answered: threading.Event) -> None:
    """Import the heavy libraries once, on this one thread (concurrent first imports of
    jsonschema from several threads can fail), then load the store's indexes. It starts once the
    first reply is out (or after 0.3 s), so it never slows the handshake. Operations wait for the
    imports; errors surface on the first call that needs them."""
    answered.wait(0.3)
    try:
        import jsonschema.validators  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        logging.getLogger("engram").warning("a dependency failed to import", exc_info=True)
    finally:
        imported.set()
    try:
        store.clean_temps()
        store.warm()
    except Exception:  # a broken store is reported by the request that needs it
        logging.getLogger("engram").debug("warm-up failed", exc_info=True)


def main(argv: Sequence[str] | None = None) -> int:
    options = _parse(sys.argv[1:] if argv is None else argv)
    if options.get("help"):
        print(USAGE, end="")
        return 0
    if options.get("version"):
        from engram_mcp import __version__

        print(f"engram-mcp {__version__}")
        return 0
    level = os.environ.get("ENGRAM_LOG", "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="engram-mcp %(levelname)s %(message)s",
    )
    from engram_mcp.app import server_spec
    from engram_mcp.tools.base import Flags
    from protocol.server import Server
    from protocol.stdio import claim_stdio
    from store import transaction
    from store.errors import StoreError
    from store.store import Store
    from store.workspace import find_workspace

    read_only = bool(options.get("read_only")) or os.environ.get("ENGRAM_READ_ONLY", "").lower() in _TRUE
    explicit = options.get("workspace")
    workspace = find_workspace(Path.cwd(), explicit if isinstance(explicit, str) else None)
    flags = Flags(
        always_load=bool(options.get("always_load")),
        elicitation=not options.get("no_elicitation"),
        read_only=read_only,
    )
    store = Store(workspace, read_only=read_only)
    try:
        transaction.recover(store)
    except StoreError as exc:
        logging.getLogger("engram").warning("%s: %s", exc.code, exc.message)
    imported, answered = threading.Event(), threading.Event()
    threading.Thread(target=_warm, args=(store, imported, answered), name="engram-warm", daemon=True).start()
    wire_in, wire_out = claim_stdio()
    try:
        timeout = _seconds(os.environ.get("ENGRAM_ELICITATION_TIMEOUT", ""), 60.0)

        def ready() -> None:
            imported.wait(60)

        spec = server_spec(store, flags, elicitation_timeout=timeout, ready=ready)
        Server(spec).serve(wire_in, _FirstReply(wire_out, answered))
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
