"""An attack on `engram ui`'s memory, run as a process of the page's own user: start the page in
a terminal of its own, open its /proc/PID/mem at the earliest moment (right after the exec,
long before the page shuts its door), wait for the approval code, then read every mapped region
through that early descriptor and look for the code and the URL's key. Prints one JSON line.

Run by tests/ui/test_secrets_after_the_door.py as a non-root user (root reads any memory)."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support import terminal  # noqa: E402


def regions(maps: bytes) -> list[tuple[int, int]]:
    found = []
    for line in maps.decode("ascii", "replace").splitlines():
        span, perms = line.split()[:2]
        if perms.startswith("r"):
            start, end = (int(x, 16) for x in span.split("-"))
            found.append((start, end))
    return found


def read_all(mem: int, spans: list[tuple[int, int]]) -> bytes:
    chunks = []
    for start, end in spans:
        try:
            chunks.append(os.pread(mem, end - start, start))
        except OSError:
            continue
    return b"".join(chunks)


def main() -> None:
    workspace = Path(sys.argv[1])
    proc = terminal.popen(
        [sys.executable, "-m", "engram_mcp.cli", "ui", "--no-open", "--idle-minutes", "2"],
        cwd=workspace,
        stdout=terminal.subprocess.PIPE,
        stderr=terminal.subprocess.PIPE,
    )
    mem = maps = -1
    deadline = time.monotonic() + 30
    while mem < 0 and time.monotonic() < deadline:
        try:
            # the launcher names the command too; engram's own image has it as python's `-m`
            if Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")[1:3] == [b"-m", b"engram_mcp.cli"]:
                mem = os.open(f"/proc/{proc.pid}/mem", os.O_RDONLY)
                maps = os.open(f"/proc/{proc.pid}/maps", os.O_RDONLY)
        except OSError:
            pass
    early = Path(f"/proc/{proc.pid}/status").read_text()
    out = b""
    while b"approval code" not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1)
        if ready:
            out += os.read(proc.stdout.fileno(), 65536)  # type: ignore[union-attr]
    time.sleep(0.5)
    text = out.decode("utf-8", "replace")
    code = re.search(r"approval code (\S+):", text)
    key = re.search(r"[?&]key=([^\s&]+)", text)
    memory = read_all(mem, regions(os.pread(maps, 1 << 22, 0))) if mem >= 0 else b""
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    child_mem = "none"
    for child in children:
        try:
            os.close(os.open(f"/proc/{child}/mem", os.O_RDONLY))
            child_mem = "opened"
        except PermissionError:
            child_mem = "refused"
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(30)
    print(
        json.dumps(
            {
                "opened_early": mem >= 0 and "TracerPid" in early,
                "read_bytes": len(memory),
                "sees_its_own_command": b"engram_mcp.cli" in memory,
                "code": code.group(1) if code else None,
                "code_found": bool(code) and code.group(1).encode() in memory,
                "key_found": bool(key) and key.group(1).encode() in memory,
                "children": len(children),
                "child_mem": child_mem,
                "exit": proc.returncode,
                "stdout": text[-2000:],
                "stderr": proc.stderr.read().decode("utf-8", "replace")[-2000:],  # type: ignore[union-attr]
            }
        )
    )


if __name__ == "__main__":
    main()
