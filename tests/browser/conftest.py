"""Real-browser tests of `engram ui` (issue 23): Playwright drives the Chromium of the Debian
packages (`/usr/bin/chromium`, installed by .ci/run where missing), never a downloaded browser.
A missing Chromium fails these tests with the fix; it never skips them."""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.support.paths import ENGRAM

CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--metrics-recording-only",
)
URL = re.compile(r"http://127\.0\.0\.1:\d+/\?key=[A-Za-z0-9_-]+")
CODE = re.compile(r"approval code (?:is )?([A-Z2-9]{4}-[A-Z2-9]{4})")


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is not installed: `apt-get install chromium` (Debian), as .ci/run does")
    return found


@pytest.fixture
def browser() -> Iterator[Browser]:
    """One Chromium per test: Playwright's sync API runs an event loop in this thread while it
    is open, and a later test of the same worker that runs its own (the SDK clients' anyio)
    would find it running."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=list(CHROMIUM_FLAGS))
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        context.close()


class Ui:
    """One `engram ui --no-open` process for a workspace: its URL (with the launch's key)."""

    def __init__(
        self, workspace: Path, popen: Callable[..., subprocess.Popen[bytes]] = subprocess.Popen
    ) -> None:
        self.process = popen(
            [ENGRAM, "--workspace", str(workspace), "ui", "--no-open", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.seen = b""
        self.url = self._read_url()
        self.origin = self.url.split("/?", 1)[0]

    def code(self) -> str:
        """The approval code the terminal shows now (as the person reads it there)."""
        assert self.process.stdout is not None
        waiting = selectors.DefaultSelector()
        waiting.register(self.process.stdout, selectors.EVENT_READ)
        while waiting.select(timeout=0.2):
            chunk = os.read(self.process.stdout.fileno(), 4096)
            if not chunk:
                break
            self.seen += chunk
        codes = CODE.findall(self.seen.decode("utf-8", "replace"))
        assert codes, self.seen.decode("utf-8", "replace")
        return str(codes[-1])

    def _read_url(self) -> str:
        assert self.process.stdout is not None
        seen = b""
        waiting = selectors.DefaultSelector()
        waiting.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if waiting.select(timeout=0.5):
                chunk = os.read(self.process.stdout.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk
                found = URL.search(seen.decode("utf-8", "replace"))
                if found and CODE.search(seen.decode("utf-8", "replace")):
                    self.seen = seen
                    return found.group(0)
        self.stop()
        raise AssertionError(f"engram ui printed no URL: {seen.decode('utf-8', 'replace')!r}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def ui(workspace: Path) -> Iterator[Ui]:
    """`engram ui` on a copy of fixtures/workspace (conftest's `workspace`)."""
    running = Ui(workspace)
    try:
        yield running
    finally:
        running.stop()
