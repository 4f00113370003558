"""Before anything is collected: is this a Python the suite can run in?

`make test` runs the suite in `.venv`, where engram is installed with its `test` extra. A pytest
from elsewhere (the `pytest` first on PATH) lacks some of that: without pytest-timeout the ini's
`timeout` is an unknown option, which `filterwarnings = error` turns into an INTERNALERROR, and
without engram's own dependencies every test module fails to import. This says so in one line.

It runs at `pytest_configure`, after this file and the conftest.py files of the folders named
on the command line are imported: keep those free of third-party imports at module level.
"""

from __future__ import annotations

import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).with_name("pyproject.toml")


def missing_distributions() -> list[str]:
    """The packages of engram's dependencies and `test` extra that this Python does not have
    (or has in a version outside the range)."""
    from packaging.requirements import Requirement  # pytest's own dependency

    project = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]
    missing = []
    for line in [*project["dependencies"], *project["optional-dependencies"]["test"]]:
        wanted = Requirement(line)
        if wanted.marker is not None and not wanted.marker.evaluate():
            continue
        try:
            version = metadata.version(wanted.name)
        except metadata.PackageNotFoundError:
            missing.append(wanted.name)
            continue
        if not wanted.specifier.contains(version, prereleases=True):
            missing.append(f"{wanted.name}{wanted.specifier} (it has {version})")
    return missing


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: its controller has checked
        return
    missing = missing_distributions()
    if missing:
        named = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise pytest.UsageError(
            f"{sys.executable} lacks {named} of engram's test environment: "
            "run `make test`, which builds .venv with them (then .venv/bin/python -m pytest PATH)"
        )
