"""Is this `engram` running in an agent's shell? (SPEC §7: CLI writes are the human's.)

The rest, and why: docs/design.md, `engram_mcp/ops/agent_shell.py`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from store.safety import untrusted

HOST_VARIABLES: Final = (
    # Claude Code's Bash tool
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_EXECPATH",
    "CLAUDE_PID",
    "AI_AGENT",
    # Codex's exec_command (CODEX_SANDBOX is its macOS Seatbelt sandbox's)
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_THREAD_ID",
    "CODEX_SESSION_ID",
    "CODEX_TOOL_CALL_ID",
    "CODEX_PERMISSION_PROFILE",
    "CODEX_CI",
    # Gemini CLI's run_shell_command (and the relaunched CLI itself)
    "GEMINI_CLI",
    "GEMINI_CLI_NO_RELAUNCH",
    # opencode's bash
    "OPENCODE",
    "OPENCODE_PID",
    "AGENT",
    # the editors' agent terminals: VS Code's Copilot agent (AI_AGENT above as well), Cursor's
    # agent, Windsurf's Cascade; their human terminals set none of these
    "COPILOT_AGENT",
    "CURSOR_AGENT",
    "WINDSURF_CASCADE_TERMINAL",
)
"""Variables a host's shell tool sets in the commands it runs, by name (set to anything)."""

HOST_PROGRAMS: Final = frozenset({"claude", "codex", "codex-linux-sandbox", "gemini", "opencode"})
"""Host CLIs by program name: an ancestor running one is an agent's host."""


@dataclass(frozen=True, slots=True)
class Process:
    pid: int
    name: str
    """The kernel's name for it (`comm`)."""
    argv: tuple[str, ...] = ()
    environ: frozenset[str] = frozenset()
    """The names in the environment it started with."""
    exe: str = ""
    """The file it runs (`/proc/PID/exe`), where that can be read: unlike `comm`, a process
    cannot rename it."""


@dataclass(frozen=True, slots=True)
class Observation:
    """What this process can see of where it runs."""

    stdin_tty: bool
    controlling_tty: bool
    environ: Mapping[str, str]
    ancestors: tuple[Process, ...] = field(default_factory=tuple)


def reasons(seen: Observation) -> list[str]:
    """Why `seen` is an agent's shell (empty: a human's terminal), for the human to read."""
    found = []
    if not seen.stdin_tty:
        found.append("stdin is not a terminal")
    elif not seen.controlling_tty:
        found.append("there is no controlling terminal")
    own = [name for name in HOST_VARIABLES if name in seen.environ]
    if own:
        found.append(f"{', '.join(own)} set")
    for process in seen.ancestors:
        held = [name for name in HOST_VARIABLES if name in process.environ]
        program = _host_program(process)
        if held or program:
            what = f"has {', '.join(held)} set" if held else f"runs {program}"
            found.append(f"an ancestor process ({process.pid}, {untrusted.line(process.name, 40)}) {what}")
            break
    else:
        if cut := detached(seen.ancestors):
            found.append(cut)
    return found


DETACHED_ROOTS: Final = frozenset(
    {"sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh", "busybox", "script", "env"}
    | {"setsid", "nohup", "timeout", "stdbuf", "xargs", "unshare", "nsenter", "bwrap", "firejail"}
    | {"expect", "unbuffer", "socat", "perl", "ruby", "node", "bun", "deno", "php", "lua", "flock"}
)
"""Where a process's file cannot be read: programs that are never the first process of a
human's terminal (interpreters count too, `python3…` by prefix)."""

TOOL_DIRS: Final = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/usr/local/sbin/")
"""Where the command-line tools live: a tool from here adopted by process 1 was detached from
whatever started it (flock, time, awk, a shell, `script`), unless it is one of
`SESSION_PROGRAMS`. Programs elsewhere (an editor in /opt or /usr/share, a terminal's server in
/usr/libexec, WSL's /init) are not judged."""

SESSION_PROGRAMS: Final = frozenset(
    {"sshd", "login", "su", "agetty", "getty", "mingetty", "cron", "crond", "atd", "mosh-server"}
    | {"tmux", "screen", "zellij", "abduco", "dtach", "gdm", "gdm3", "lightdm", "sddm", "xdm", "lxdm"}
    | {"greetd", "ly", "xinit", "startx", "sway", "Hyprland", "i3", "gnome-shell", "kwin_wayland"}
    | {"xterm", "uxterm", "kitty", "alacritty", "wezterm", "wezterm-gui", "wezterm-mux-server", "foot"}
    | {"konsole", "xfce4-terminal", "mate-terminal", "lxterminal", "qterminal", "tilix", "terminator"}
    | {"guake", "sakura", "terminology", "urxvt", "rxvt", "st", "gnome-terminal", "ptyxis", "kgx"}
    | {"code", "code-insiders", "codium", "cursor", "windsurf", "emacs", "gvim", "nvim-qt", "zed"}
    | {"urxvtd", "ttyd", "etserver", "plasmashell", "niri", "dropbear", "in.telnetd", "inetd", "xinetd"}
    | {"xrdp-sesman", "xrdp", "sshd-session", "systemd-logind", "wayfire", "labwc", "river", "weston"}
)
"""Programs in `TOOL_DIRS` that do start a human's terminal: its session, a multiplexer, a
terminal program or an editor (a terminal written in Python counts by its script)."""

INITS: Final = frozenset({"systemd", "init", "launchd", "tini", "docker-init", "dumb-init", "catatonit"})
"""Process 1's programs in `TOOL_DIRS`; any other there (a shell, flock, `script`) makes a PID
namespace of its own."""


def detached(chain: Sequence[Process], *, container: bool | None = None) -> str:
    """Why the process chain (nearest first) was cut off from where it started, or empty: a
    command-line tool (`TOOL_DIRS`, not a session program) whose parent is process 1 or a
    session's systemd, which adopt orphans, or such a tool as process 1 itself. Empty as well
    when the chain does not reach process 1 (another user's, or a container entered from
    outside), and in a container, where a command under process 1 is how it starts."""
    if not chain or chain[-1].pid != 1 or (_in_container() if container is None else container):
        return ""
    if _own_namespace(chain[-1]):
        return (
            f"process 1 of its PID namespace is {untrusted.line(chain[-1].name, 40)}: a namespace "
            "of its own hides what started it"
        )
    for process, parent in zip(chain, chain[1:], strict=False):
        if _adopts(parent) and _detached_root(process):
            return (
                f"its processes lead up to {untrusted.line(process.name, 40)} ({process.pid}), which "
                "runs detached from whatever started it"
            )
    return ""


def _in_container() -> bool:
    """Whether this runs in a container (Docker's, Podman's, Kubernetes', LXC): there a
    container's command is process 1 or its child, so a chain cut off cannot be told from one
    that began there. Told by files and process 1's cgroup, which a process cannot set."""
    if Path("/.dockerenv").exists() or Path("/run/.containerenv").exists():
        return True
    try:
        groups = Path("/proc/1/cgroup").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(word in groups for word in ("docker", "containerd", "kubepods", "libpod", "lxc"))


def _detached_root(process: Process) -> bool:
    if not process.exe:  # another user's, or one of ours that made itself undumpable: by name
        return process.name in DETACHED_ROOTS or process.name.startswith("python")
    program = process.exe.rsplit("/", 1)[-1]
    if _LOADER.fullmatch(program):  # `ld-linux… /usr/bin/script`: a tool run through the loader
        return True
    if process.exe.startswith(_SCRATCH) or process.exe.startswith(str(Path.home()) + "/"):
        return not _session_program(program)  # a copy of a tool, or an interpreter of the user's
    if not process.exe.startswith(TOOL_DIRS):
        return False
    if program.startswith(("python", "perl")) and len(process.argv) > 1:  # a terminal in Python
        script = process.argv[1]
        return not (script.startswith(TOOL_DIRS) and _session_program(script.rsplit("/", 1)[-1]))
    return not _session_program(program)


_LOADER: Final = re.compile(r"ld-(?:linux|musl)[\w.-]*\.so[\w.]*|ld\.so")
_SCRATCH: Final = ("/tmp/", "/var/tmp/", "/dev/shm/", "/run/user/")


def _session_program(program: str) -> bool:
    return program in SESSION_PROGRAMS or program.startswith(("emacs", "ghostty", "kitty", "wezterm"))


def _adopts(process: Process) -> bool:
    """Process 1, or a session's service manager (a user's systemd is a child subreaper)."""
    if process.pid == 1:
        return True
    if process.exe:
        return process.exe.rsplit("/", 1)[-1] == "systemd" and "/systemd/" in process.exe
    return process.name == "systemd"


def _own_namespace(first: Process) -> bool:
    if not first.exe:
        return first.name in DETACHED_ROOTS or first.name.startswith("python")
    return first.exe.startswith(TOOL_DIRS) and first.exe.rsplit("/", 1)[-1] not in INITS


def detect() -> list[str]:
    """Why this process runs in an agent's shell; empty when it runs in a human's terminal."""
    return reasons(observe())


def observe() -> Observation:
    """This process: its terminal, its environment and its ancestors."""
    return Observation(
        stdin_tty=os.isatty(0),
        controlling_tty=_controlling_tty(),
        environ=dict(os.environ),
        ancestors=tuple(ancestors(os.getppid())),
    )


def ancestors(
    pid: int, read: Callable[[Path], bytes] | None = None, depth: int | None = None
) -> list[Process]:
    """The processes from `pid` up to process 1 (of this namespace), nearest first, read from
    `/proc`; empty where there is none (macOS) or it cannot be read. No depth limit unless a
    caller wants only the nearest (`depth`): nesting the command under many shells must not
    hide the host. Each pid is read once, so the walk ends within the number of processes."""
    reader = read or _read_bytes
    chain: list[Process] = []
    seen: set[int] = set()
    while pid >= 1 and pid not in seen and (depth is None or len(chain) < depth):
        seen.add(pid)
        base = Path("/proc") / str(pid)
        try:
            stat = reader(base / "stat").decode("utf-8", "replace")
            name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
            parent = int(rest.split()[1])
        except (OSError, ValueError, IndexError):
            break
        exe = _exe(base) if read is None else ""
        chain.append(Process(pid, name, _argv(reader, base), _environ(reader, base), exe))
        pid = parent
    return chain


def _host_program(process: Process) -> str:
    """The host CLI `process` runs (its name, or one of its first three argv words: node and
    bun run a CLI's script), or empty."""
    for word in (process.name, *process.argv[:3]):
        base = word.rsplit("/", 1)[-1]
        if base in HOST_PROGRAMS:
            return base
    return ""


def _exe(base: Path) -> str:
    try:
        return os.readlink(base / "exe").removesuffix(" (deleted)")
    except OSError:
        return ""


def _argv(read: Callable[[Path], bytes], base: Path) -> tuple[str, ...]:
    try:
        raw = read(base / "cmdline")
    except OSError:
        return ()
    return tuple(word.decode("utf-8", "replace") for word in raw.split(b"\0")[:3] if word)


def _environ(read: Callable[[Path], bytes], base: Path) -> frozenset[str]:
    """The variable names of `base`'s environment (another user's cannot be read: empty)."""
    try:
        raw = read(base / "environ")
    except OSError:
        return frozenset()
    return frozenset(
        entry.split(b"=", 1)[0].decode("utf-8", "replace") for entry in raw.split(b"\0") if b"=" in entry
    )


def _read_bytes(path: Path) -> bytes:
    with path.open("rb") as file:
        return file.read(1 << 20)


def _controlling_tty() -> bool:
    if sys.platform == "win32":  # pragma: no cover - no /dev/tty: a console on stdin is the terminal
        return os.isatty(0)
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False
    os.close(fd)
    return True


SHELL_PARENTS: Final = frozenset(
    {"sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "busybox", "script", "env", "sudo", "doas"}
    | {"xargs", "timeout", "nohup", "setsid", "stdbuf", "nice", "codex-linux-sandbox"}
)
"""Programs that start `engram-mcp` in an agent's shell (its shell, a wrapper, Codex's
sandbox). Hosts start their MCP servers themselves: with each of the four measured, the
server's parent is the host's own process."""


def shell_parent(read: Callable[[Path], bytes] | None = None) -> str:
    """Why this `engram-mcp` looks started by an agent rather than by its host, or empty: its
    parent is a shell or a wrapper, or its stdin or stdout is not a pipe whose other end the
    parent holds (a host talks to its server over two pipes of its own; `exec engram-mcp <
    requests` in an agent's shell, or a pipe from a sibling, does not). A user who starts the
    server through a shell in a host config (`bash -lc engram-mcp`) is seen so too: that costs
    a review in verify, never a refusal. An agent that spawns the server from a program of its
    own over pipes is seen by the shell between that program and the host, or by a chain cut off
    from its host (`detached`)."""
    parent = os.getppid()
    chain = ancestors(parent, read)
    if chain and (chain[0].name in SHELL_PARENTS or _program(chain[0]) in SHELL_PARENTS):
        return f"its parent is {untrusted.line(chain[0].name, 40)}"
    if shell := _shell_below_host(chain):
        return shell
    if cut := detached(chain):
        return cut
    for fd, name in ((0, "stdin"), (1, "stdout")):
        held = _pipe_held_by(fd, parent)
        if held is False:
            return f"its {name} is not a pipe from the process that started it"
    return ""


SERVER_HOSTS: Final = HOST_PROGRAMS | {"code", "code-insiders", "codium", "cursor", "windsurf"}
"""Programs that start MCP servers themselves: the CLIs, and the editors' extension hosts."""


def _program(process: Process) -> str:
    """What `process` runs, by its file where that can be read (a process can rename itself)."""
    return process.exe.rsplit("/", 1)[-1] if process.exe else process.name


def _shell_below_host(chain: Sequence[Process]) -> str:
    """Why this server was started by something under its host rather than by the host
    itself (a shell, the agent's program, a loader or a copy running it over pipes of its own),
    or empty: empty too when no host is in the chain (a host engram does not know, or an SDK
    client a person runs: only its parent is judged). Hosts start their servers as their own
    children."""
    for index, process in enumerate(chain):
        if _host_program(process) or process.name in SERVER_HOSTS:
            if index == 0:
                return ""
            parent = chain[0]
            return (
                f"its parent ({parent.pid}, {untrusted.line(parent.name, 40)}) runs under its host "
                f"({untrusted.line(process.name, 40)}) rather than being it"
            )
    return ""


def _pipe_held_by(fd: int, pid: int) -> bool | None:
    """Whether `fd` of this process is a pipe whose other end `pid` holds; None where /proc
    cannot tell (not Linux, or another user's process)."""
    try:
        mine = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    if not mine.startswith("pipe:"):
        return False
    try:
        theirs = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for entry in theirs[:65536]:
        try:
            if os.readlink(f"/proc/{pid}/fd/{entry}") == mine:
                return True
        except OSError:
            continue
    return False


def described(found: Sequence[str]) -> str:
    """The reasons as one clause: `stdin is not a terminal; CLAUDECODE set`."""
    return "; ".join(found)
