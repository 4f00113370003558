"""What a host's shell tool gives the commands it runs: run by the host, through its shell tool.

Prints one line `ENGRAM-PROBE <json>` (and writes the same JSON to the path in argv[1], when
given): the environment, whether stdin/stdout/stderr are terminals and a controlling terminal
can be opened, the session and process group, and every ancestor process with its name and
the names of the variables in its environment. Standard library only: it runs under whatever
Python the host's shell finds.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def _proc(pid: int) -> dict[str, Any]:
    base = Path("/proc") / str(pid)
    found: dict[str, Any] = {"pid": pid}
    try:
        stat = (base / "stat").read_text()
        found["ppid"] = int(stat.rsplit(")", 1)[1].split()[1])
        found["comm"] = (base / "comm").read_text().strip()
        found["cmdline"] = (base / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
        names = [
            entry.split(b"=", 1)[0].decode(errors="replace")
            for entry in (base / "environ").read_bytes().split(b"\0")
            if entry
        ]
        found["environ"] = sorted(names)
    except (OSError, ValueError, IndexError) as exc:
        found["error"] = repr(exc)
    return found


def _controlling_tty() -> bool:
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def main() -> None:
    ancestors = []
    pid = os.getppid()
    while pid >= 1 and len(ancestors) < 20:
        info = _proc(pid)
        ancestors.append(info)
        pid = int(info.get("ppid", 0))
    report = {
        "env": {name: value[:120] for name, value in sorted(os.environ.items())},
        "isatty": [os.isatty(fd) for fd in (0, 1, 2)],
        "dev_tty": _controlling_tty(),
        "sid": os.getsid(0),
        "pgid": os.getpgid(0),
        "pid": os.getpid(),
        "ancestors": ancestors,
    }
    text = json.dumps(report, sort_keys=True)
    if len(sys.argv) > 1:
        try:
            Path(sys.argv[1]).write_text(text)
        except OSError as exc:
            print(f"probe: cannot write {sys.argv[1]}: {exc}", file=sys.stderr)
    print("ENGRAM-PROBE " + text)


if __name__ == "__main__":
    main()
