"""Real browser: the training page shows live progress and charts, Stop keeps the model, results appear."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pytest
from e2e_support import CHROMIUM, free_port, start_streamlit, stop
from PIL import Image

from gradviz.training import CLASSES

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
APP = Path(__file__).resolve().parent / "training_app.py"
SCREENSHOT = ROOT / "docs" / "screenshots" / "training.png"
METRIC = '[data-testid="stMetricLabel"]'
FRESH = '[data-testid="stElementContainer"][data-stale="false"] '  # drawn by the current run
CHART = '[data-testid="stVegaLiteChart"], [data-testid="stArrowVegaLiteChart"]'


def _folder(root: Path) -> Path:
    rng = np.random.default_rng(0)
    for split, n in (("train", 20), ("test", 5)):
        for k, c in enumerate(CLASSES):
            d = root / split / c
            d.mkdir(parents=True)
            for i in range(n):
                arr = rng.integers(0, 40, (32, 32, 3), dtype=np.uint8) + np.uint8(k * 20)
                Image.fromarray(arr).save(d / f"{i}.png")
    return root


@pytest.fixture
def server(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found")
    pytest.importorskip("playwright.sync_api")
    port = free_port()
    env = {
        "GRADVIZ_E2E_FOLDER": str(_folder(tmp_path / "data")),
        "GRADVIZ_E2E_PRESET": "fast",
    }
    proc = start_streamlit(APP, port, env=env)
    yield f"http://127.0.0.1:{port}"
    stop(proc)


def _set_number(page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    page.wait_for_timeout(800)


def test_live_chart_stop_and_results(server, browser, tmp_path):
    from playwright.sync_api import expect

    with contextlib.closing(
        browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    ) as context:
        try:
            page = context.new_page()
            page.goto(server)
            expect(page.get_by_text("CIFAR-10 training").first).to_be_visible(timeout=60_000)
            expect(page.get_by_text("200 training and 50 test images", exact=False)).to_be_visible(
                timeout=60_000
            )

            # A long run of the fast preset: watch it live, then stop it.
            _set_number(page, "Epochs", "200")
            page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train").click()
            expect(page.get_by_text("images/s", exact=False).first).to_be_visible(timeout=60_000)
            expect(page.locator(CHART).first).to_be_visible(timeout=60_000)
            expect(page.get_by_text("ETA", exact=False).first).to_be_visible()
            assert (
                page.locator(METRIC, has_text="Test accuracy").count() == 0
            )  # still training: the chart is live
            page.wait_for_timeout(1500)
            page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop").click()
            expect(page.get_by_text("stopped by you", exact=False)).to_be_visible(timeout=60_000)
            expect(page.locator(METRIC, has_text="Test accuracy").first).to_be_visible()

            # A short run to the end: results, pictures, download.
            _set_number(page, "Epochs", "30")
            page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train").click()
            # While it trains, the stopped run's results may stay on screen, faded and marked
            # stale by Streamlit until the script run ends: read only fresh ones.
            stop_button = page.get_by_test_id("stMainBlockContainer").get_by_role(
                "button", name="Stop"
            )
            expect(stop_button).to_be_visible(timeout=60_000)
            expect(stop_button).to_have_count(0, timeout=180_000)
            expect(page.locator(FRESH + METRIC, has_text="Test accuracy").first).to_be_visible(
                timeout=120_000
            )
            expect(
                page.get_by_text("Accuracy of the network on the 50 test images", exact=False)
            ).to_be_visible()
            expect(page.get_by_role("button", name="Download weights (state_dict)")).to_be_visible()
            assert page.locator('img[alt="confusion matrix of the test images"]').count() == 1
            assert (
                page.locator('img[alt="test images with predicted and true labels"]').count() == 1
            )
            assert page.locator(CHART).count() >= 2
            assert page.locator('[data-testid="stException"]').count() == 0
            # Download the weights, upload them back: evaluated to the same accuracy as the
            # run that made them; upload garbage: refused.
            shown = page.locator(FRESH + '[data-testid="stMetricValue"]').first.inner_text().strip()
            with page.expect_download() as info:
                page.get_by_role("button", name="Download weights (state_dict)").click()
            weights = tmp_path / "weights.pt"
            info.value.save_as(weights)
            uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
            uploader.set_input_files(str(weights))
            expect(page.get_by_text("fast-cpu weights:", exact=False)).to_be_visible(timeout=60_000)
            expect(page.get_by_text(f"fast-cpu weights: {shown} on 50 test images")).to_be_visible()
            garbage = tmp_path / "garbage.pt"
            garbage.write_bytes(b"this is not a checkpoint")
            uploader.set_input_files(str(garbage))
            expect(page.get_by_text("Weights refused", exact=False)).to_be_visible(timeout=60_000)
            assert page.locator('[data-testid="stException"]').count() == 0
            uploader.set_input_files(str(weights))
            expect(page.get_by_text("fast-cpu weights:", exact=False)).to_be_visible(timeout=60_000)

            page.set_viewport_size({"width": 1400, "height": 3300})  # the whole page in one picture
            page.wait_for_timeout(2000)  # let the images and charts paint
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
        finally:
            page.close()
