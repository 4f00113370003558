"""`engram-mcp`: the stdio MCP server. Flags are documented in `--help` and the README."""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.store import Store

log = logging.getLogger("engram")

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


def prepare(store: Store) -> Callable[[], None]:
    """The server's one start-up step, run by the protocol loop on its reader thread once the
    first line is answered and before any operation is dispatched: import what operations need
    (here, on one thread: concurrent first imports of jsonschema can fail), then read the
    store's indexes on a background thread while the client sends its next request. Requests
    that get there first simply wait on the store's own locks."""

    def run() -> None:
        try:
            import jsonschema.validators  # noqa: F401
            import numpy  # noqa: F401
        except ImportError:  # reported again by the first call that needs it
            log.warning("a dependency failed to import", exc_info=True)
        threading.Thread(target=_warm, args=(store,), name="engram-warm", daemon=True).start()

    return run


def _warm(store: Store) -> None:
    try:
        store.clean_temps()
        store.warm()
    except Exception:  # a broken store is reported by the request that needs it
        log.debug("warm-up failed", exc_info=True)
    gc.freeze()  # the store's long-lived objects: later collections no longer walk them


class _Terminated(Exception):
    """SIGTERM, raised in the main thread so the loop's `finally` finishes in-flight writes."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until stdin closes (exit 0). SIGINT exits 130 and SIGTERM 143, each after the
    in-flight calls finished, with nothing on stdout and no traceback."""
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (an embedding test): leave signals alone
        previous = None
    try:
        return _serve(argv)
    except KeyboardInterrupt:
        return 130
    except _Terminated:
        return 143
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _serve(argv: Sequence[str] | None) -> int:
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
    if "ENGRAM_LOG" not in os.environ:
        logging.getLogger("engram.progress").setLevel(logging.INFO)  # index builds over 1 s
    from engram_mcp.app import server_spec
    from engram_mcp.tools.base import Flags
    from protocol.server import Server
    from protocol.stdio import claim_stdio
    from store import transaction
    from store.errors import StoreError
    from store.store import Store
    from store.workspace import find_workspace

    read_only = bool(options.get("read_only")) or os.environ.get("ENGRAM_READ_ONLY", "").lower() in _TRUE
    try:
        explicit = options.get("workspace")
        workspace = find_workspace(Path.cwd(), explicit if isinstance(explicit, str) else None)
    except StoreError as exc:  # a --workspace folder that does not exist is never created
        print(
            f"engram-mcp: {exc.code}: {exc.message.replace('the workspace ', '--workspace ', 1)}",
            file=sys.stderr,
        )
        return 1
    flags = Flags(
        always_load=bool(options.get("always_load")),
        elicitation=not options.get("no_elicitation"),
        read_only=read_only,
    )
    store = Store(workspace, read_only=read_only)
    try:
        transaction.recover(store)
    except StoreError as exc:
        log.warning("%s: %s", exc.code, exc.message)
    wire_in, wire_out = claim_stdio()
    try:
        timeout = _seconds(os.environ.get("ENGRAM_ELICITATION_TIMEOUT", ""), 60.0)
        spec = server_spec(store, flags, elicitation_timeout=timeout, prepare=prepare(store))
        Server(spec).serve(wire_in, wire_out)
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
