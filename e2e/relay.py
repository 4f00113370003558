"""A recording relay in front of engram-mcp: what each host really asked engram, line by line.

`install(folder, log)` writes an executable `engram-mcp` into `folder` that starts this
checkout's engram-mcp and copies every JSON-RPC line both ways, appending each to `log` as
`{"dir": "in"|"out", "msg": ...}`. The log path is written into the script itself, because
hosts pass MCP servers a filtered environment. Hosts find the relay because `engram link`
wrote the bare name `engram-mcp` (this checkout's is first on PATH while linking) and the
relay's folder is first on PATH while the host runs. When a host config names an absolute
path instead, nothing is recorded and the report says so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from e2e.sandbox import BIN

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """#!{python}
import json, subprocess, sys, threading
sys.path.insert(0, {root!r})
LOG = {log!r}
lock = threading.Lock()
try:  # what the host gave the server it started: its variables' names, a terminal, its ancestors
    from engram_mcp.ops import agent_shell
    seen = agent_shell.observe()
    with open(LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps({{"dir": "env", "msg": {{"names": sorted(seen.environ), "reasons": agent_shell.reasons(seen),
            "ancestors": [[p.pid, p.name, list(p.argv)] for p in seen.ancestors[:4]]}}}}) + "\\n")
except Exception:
    pass  # a witness only: the relay never fails because of it
def record(direction, line):
    try:
        msg = json.loads(line)
    except ValueError:
        msg = line.decode("utf-8", "replace")
    with lock, open(LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps({{"dir": direction, "msg": msg}}) + "\\n")
child = subprocess.Popen([{server!r}, *sys.argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def pump_in():
    for line in sys.stdin.buffer:
        record("in", line)
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
threading.Thread(target=pump_in, daemon=True).start()
for line in child.stdout:
    record("out", line)
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.exit(child.wait())
"""


def install(folder: Path, log: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    relay = folder / "engram-mcp"
    relay.write_text(
        SCRIPT.format(python=sys.executable, log=str(log), server=str(BIN / "engram-mcp"), root=str(ROOT))
    )
    relay.chmod(0o755)
    return relay


def read(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    entries = []
    for line in log.read_text("utf-8").splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


CLI_SCRIPT = """#!{python}
import json, subprocess, sys
done = subprocess.run([{engram!r}, *sys.argv[1:]])
try:
    with open({log!r}, "a", encoding="utf-8") as out:
        out.write(json.dumps({{"argv": sys.argv[1:], "exit": done.returncode}}) + "\\n")
except OSError:
    pass  # a host's sandbox may forbid the log: the exit code still goes back
sys.exit(done.returncode)
"""


def install_cli(folder: Path, log: Path) -> Path:
    """An `engram` in `folder` that runs this checkout's and records each call (argv, exit code)
    in `log`: the witness that a host's shell really ran `engram save-session --force`."""
    folder.mkdir(parents=True, exist_ok=True)
    cli = folder / "engram"
    cli.write_text(CLI_SCRIPT.format(python=sys.executable, log=str(log), engram=str(BIN / "engram")))
    cli.chmod(0o755)
    return cli
