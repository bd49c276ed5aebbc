"""Real-browser fixtures: a `streamlit run` server on loopback and headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from e2e_support import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_streamlit, stop


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium); CI installs it")
    sync_api = pytest.importorskip("playwright.sync_api")
    # An assertion without its own timeout waits 20 s, not Playwright's 5 s: on a shared
    # 2-core CI host a rerun of the page can take longer than 5 s, and a failure then says
    # nothing about the page.
    sync_api.expect.set_options(timeout=20_000)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="session")
def app_server():
    port = free_port()
    proc = start_streamlit(ROOT / "app.py", port)
    yield f"http://127.0.0.1:{port}"
    stop(proc)


def pytest_collection_modifyitems(items):
    """A real browser on a shared 2-core machine sometimes misses a beat (a rerun still in
    flight when the test clicks): retry a failed browser test twice before calling it failed.
    Unit and AppTest tests are never retried."""
    for item in items:
        if item.get_closest_marker("e2e"):
            item.add_marker(pytest.mark.flaky(reruns=2, reruns_delay=2))
