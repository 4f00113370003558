"""`engram-mcp`: the stdio MCP server. Flags are documented in `--help` and the README."""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from engram_mcp import __version__, platform
from engram_mcp.errors import Terminated
from engram_mcp.mcp.identity import INSTRUCTIONS, SERVER_NAME
from engram_mcp.ops.agent_shell import shell_parent
from protocol.loop import Server
from protocol.spec import DeferredSpec
from protocol.stdio import claim_stdio
from store.errors import StoreError
from store.files.workspace import find_workspace

if TYPE_CHECKING:
    from protocol.spec import ServerSpec
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


class Application:
    """What `engram-mcp` serves. The handshake is answered from engram_mcp.mcp.identity alone; the
    rest (the store with its journals recovered, the tools, the warm-up) is built by `load` when
    the protocol loop asks for it (protocol.spec.DeferredSpec): once, on the reader thread,
    after the first reply and before the first operation. So the application's imports never
    delay `initialize` or `server/discover`."""

    def __init__(
        self,
        workspace: Path,
        *,
        read_only: bool = False,
        elicitation: bool = True,
        always_load: bool = False,
        elicitation_timeout: float = 60.0,
    ) -> None:
        self.workspace = workspace
        self._options = (read_only, elicitation, always_load)
        self._elicitation_timeout = elicitation_timeout
        self.store: Store | None = None
        self.started_by_shell = ""
        """Why this process looks started by an agent rather than by its host
        (engram_mcp.ops.agent_shell.shell_parent), or empty: its writes are then sealed as made from
        an agent's shell, and verify lists them."""
        self.helpers: list[threading.Thread] = []
        """The warm-up threads `_prepare` started (a test joins them)."""

    def spec(self) -> DeferredSpec:
        return DeferredSpec(SERVER_NAME, __version__, INSTRUCTIONS, self.load)

    def load(self) -> ServerSpec:
        from engram_mcp.mcp import app  # seam: the application (tools, ops, the store), after the first reply

        read_only, elicitation, always_load = self._options
        self.store = app.open_store(
            self.workspace, read_only=read_only, started_by_shell=self.started_by_shell
        )
        return app.served_spec(
            self.store,
            read_only=read_only,
            elicitation=elicitation,
            always_load=always_load,
            elicitation_timeout=self._elicitation_timeout,
            prepare=self._prepare,
        )

    def _prepare(self) -> None:
        """The loaded spec's start-up step: read the store's indexes on a background thread
        while the client sends its next request. Requests that get there first simply wait on
        the store's own locks. Nothing heavy is imported up front: a small store's valid calls
        need neither jsonschema (see protocol.validation) nor numpy (store.search.bm25), and each is
        imported by its package name first wherever it is needed, which is safe from any thread."""
        assert self.store is not None
        warm = threading.Thread(target=_warm, args=(self.store,), name="engram-warm", daemon=True)
        self.helpers.append(warm)
        warm.start()

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def application(argv: Sequence[str], cwd: Path) -> Application:
    """The Application `engram-mcp argv…` started in `cwd` serves (options from flags and the
    environment); StoreError (ENGRAM_NO_WORKSPACE) for a --workspace that does not exist."""
    return _application(_parse(argv), cwd)


def _application(options: dict[str, object], cwd: Path) -> Application:
    read_only = bool(options.get("read_only")) or os.environ.get("ENGRAM_READ_ONLY", "").lower() in _TRUE
    explicit = options.get("workspace")
    return Application(
        find_workspace(cwd, explicit if isinstance(explicit, str) else None),
        read_only=read_only,
        elicitation=not options.get("no_elicitation"),
        always_load=bool(options.get("always_load")),
        elicitation_timeout=_seconds(os.environ.get("ENGRAM_ELICITATION_TIMEOUT", ""), 60.0),
    )


def _warm(store: Store) -> None:
    # the index first, then the temp files' listing: a first search waits on the one, not the other
    for step in (store.warm, store.clean_temps):
        try:
            step()
        except Exception:  # a broken store is reported by the request that needs it
            log.debug("warm-up failed", exc_info=True)
    gc.freeze()  # the store's long-lived objects: later collections no longer walk them


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until stdin closes (exit 0). SIGINT exits 130 and SIGTERM 143 (on Windows, which
    never delivers SIGTERM, Ctrl+Break: engram_mcp.platform), each after the in-flight calls
    finished, with nothing on stdout and no traceback. Off the main thread (an embedding test)
    no handler is installed."""
    try:
        with platform.on_stop_signals(_on_sigterm):
            return _serve(argv)
    except KeyboardInterrupt:
        return 130
    except Terminated:
        return platform.STOPPED_EXIT


def _serve(argv: Sequence[str] | None) -> int:
    options = _parse(sys.argv[1:] if argv is None else argv)
    if options.get("help"):
        print(USAGE, end="")
        return 0
    if options.get("version"):
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
    try:
        app = _application(options, Path.cwd())
    except StoreError as exc:  # a --workspace folder that does not exist is never created
        print(
            f"engram-mcp: {exc.code}: {exc.message.replace('the workspace ', '--workspace ', 1)}",
            file=sys.stderr,
        )
        return 1
    app.started_by_shell = shell_parent()
    wire_in, wire_out = claim_stdio()
    try:
        Server(app.spec()).serve(wire_in, wire_out)
    finally:
        app.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
