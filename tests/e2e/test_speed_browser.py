"""Real browser: the Speed page runs a sweep and draws its charts; Stop stops a long run.

Starts `streamlit run` on a free loopback port with a script that runs only the Speed page,
drives headless Chromium, saves docs/screenshots/speed.png, and stops the server.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from e2e_support import free_port, start_streamlit, stop

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "e2e" / "apps" / "speed_only.py"
SCREENSHOT = ROOT / "docs" / "screenshots" / "speed.png"


@pytest.fixture
def server():
    port = free_port()
    proc = start_streamlit(SCRIPT, port)
    yield f"http://127.0.0.1:{port}"
    stop(proc)


def _set_number(page, label: str, value: int) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")


def test_sweep_draws_chart_and_stop_stops(server, browser):
    from playwright.sync_api import expect

    with contextlib.closing(
        browser.new_context(viewport={"width": 1400, "height": 2300}, accept_downloads=True)
    ) as context:
        try:
            page = context.new_page()
            page.goto(server, timeout=60_000)
            expect(page.get_by_text("CPU vs GPU speed")).to_be_visible(timeout=60_000)
            # the reference `make gpu-check` recorded on a real GPU (docs/gpu_speed_reference.json)
            expect(
                page.get_by_text("GPU figures below come from a results file measured on")
            ).to_be_visible()

            # 1. The lesson's timing both ways at the default (small) size.
            page.get_by_role("button", name="Time it both ways").click()
            expect(page.get_by_text("Why the two figures differ")).to_be_visible(timeout=120_000)
            expect(page.get_by_text("cpu (live)", exact=True)).to_have_count(1)

            # 2. A sweep at the default sizes draws both charts.
            page.get_by_role("button", name="Run sweep").click()
            charts = page.locator('[data-testid="stVegaLiteChart"]')
            expect(charts).to_have_count(2, timeout=180_000)
            expect(page.get_by_text("Sweep: done")).to_be_visible(timeout=180_000)
            # vega-embed has drawn marks (canvas or svg) inside each chart
            expect(charts.first.locator("canvas, svg").first).to_be_visible(timeout=30_000)
            page.wait_for_timeout(1500)  # let the charts finish their first paint
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)

            # 3. A long comparison (17 calls), stopped with the page's own Stop button (not
            # the Stop of Streamlit's toolbar): the page says so and keeps serving.
            _set_number(page, "Size (elements per tensor)", 4_000_000)
            _set_number(page, "Iterations of the loop", 100)
            repeats = page.get_by_role("slider").first
            repeats.focus()
            repeats.press("End")  # 15 timed repeats
            expect(page.get_by_text("17 calls", exact=False)).to_be_visible(timeout=60_000)
            page.get_by_role("button", name="Time it both ways").click()
            progress = page.locator('[data-testid="stProgress"]')
            running = progress.get_by_text(re.compile(r"step \d+ of 17"))
            expect(running).to_be_visible(timeout=180_000)
            page.locator(".st-key-speed_cmp_stop button:visible").click()
            expect(page.get_by_text("Stopped: 0 of 1 devices finished")).to_be_visible(
                timeout=120_000
            )
            # The stopped run left no live rows; the GPU reference's comparison (recorded by
            # `make gpu-check`, docs/gpu_speed_reference.json) stays, with its explanation.
            expect(page.get_by_text("cpu (live)", exact=True)).to_have_count(0)
            expect(page.get_by_text("Why the two figures differ")).to_have_count(1)
            # The sweep's charts survive the rerun that Stop caused.
            expect(charts).to_have_count(2)
        finally:
            page.close()
