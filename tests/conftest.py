"""Shared fixtures: the repository path and a headless browser.

Real data comes from tests/data (paths in _build.py), never from ../shared.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from _cases import database  # noqa: F401  (the store's two backends, for every case test)

REPO = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """Keep the jurisdictions cache of the test run out of the user's ~/.cache.

    Set in the environment (not monkeypatched) so the CLI subprocesses the tests start
    inherit it: every test run starts with an empty cache of its own.
    """
    os.environ["GEOREVIEW_CACHE_DIR"] = tempfile.mkdtemp(prefix="georeview-test-cache-")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's cache folder (it holds only what this run wrote)."""
    folder = os.environ.get("GEOREVIEW_CACHE_DIR", "")
    if Path(folder).name.startswith("georeview-test-cache-"):
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by playwright, one per test module (never downloaded).

    Module scope, not session: playwright's sync API holds an event loop while open,
    and other modules start Dask clusters with loops of their own.
    """
    from _web_helpers import CHROMIUM, launch_browser

    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = launch_browser(pw)
        yield b
        b.close()
