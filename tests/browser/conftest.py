"""A real Chromium (Debian's package, driven by Playwright through ``executable_path``;
Playwright's own browser download cannot work offline) with JavaScript off."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Where each page's screenshot is saved (CI keeps the folder as an artefact).
SCREENSHOTS = Path(os.environ.get("REVIEWBOT_SCREENSHOTS", ROOT / "test-artifacts" / "screenshots"))
#: Flags for a root user on a machine with no network: no sandbox (root), and none of
#: Chromium's background connections, which this machine's closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def chromium_path() -> str | None:
    for name in (os.environ.get("REVIEWBOT_CHROMIUM"), "chromium", "chromium-browser"):
        if name and (found := shutil.which(name)):
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per test module. Playwright's sync API keeps an event loop running in
    this thread while it is open, so it must close before other tests (which call
    ``asyncio.run``) run."""
    path = chromium_path()
    playwright_api = pytest.importorskip("playwright.sync_api")
    if path is None:
        if os.environ.get("REVIEWBOT_REQUIRE_BROWSER"):
            pytest.fail("no chromium on PATH, and REVIEWBOT_REQUIRE_BROWSER is set")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser profile (no cookies) with JavaScript disabled."""
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    try:
        yield context.new_page()
    finally:
        context.close()


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(target), full_page=True)
    return target
