"""The host CLIs, installed from npm at their pinned versions into a cache reused across runs.

The cache is `$ENGRAM_E2E_CACHE`, else `~/.cache/engram-e2e`; each package gets its own npm
prefix `hosts/<package>_<version>/`, so a new pin installs beside the old one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


def cache_root() -> Path:
    configured = os.environ.get("ENGRAM_E2E_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "engram-e2e"


def ensure(package: str, version: str, binary: str) -> Path:
    """The host's executable, installing `package@version` first when it is not cached.

    Raises:
        RuntimeError: npm is missing or the install failed (its output is in the message).
    """
    prefix = cache_root() / "hosts" / f"{package.lstrip('@').replace('/', '_')}_{version}"
    executable = prefix / "node_modules" / ".bin" / binary
    if executable.exists():
        return executable
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH: install Node.js 20 or newer, then rerun `make hosts-e2e`")
    prefix.mkdir(parents=True, exist_ok=True)
    argv = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ]
    done = subprocess.run([*argv, f"{package}@{version}"], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not executable.exists():
        raise RuntimeError(f"npm install {package}@{version} failed:\n{done.stdout}{done.stderr}")
    return executable
