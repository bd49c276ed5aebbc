"""Real browser: the training page shows live progress and charts, Stop keeps the model, results
appear; and a real run on the shared CIFAR-10 subset draws README's screenshot."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import numpy as np
import pytest
from e2e_support import CHROMIUM, free_port, start_streamlit, stop
from PIL import Image

from gradviz.training import CLASSES
from gradviz.training.sources import display_classes

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
APP = Path(__file__).resolve().parent / "training_app.py"
SCREENSHOT = ROOT / "docs" / "screenshots" / "training.png"
# The real CIFAR-10 images beside the repository, where the app itself looks for them
# (gradviz.training.sources.shared_subset_dir) and the unit tests find them.
SUBSET = (ROOT / ".." / "shared" / "data" / "cifar10-subset").resolve()
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png"}
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


@contextlib.contextmanager
def _serve(folder: Path, **more_env: str):
    """The training page alone, its Folder field set to `folder`, the fast preset chosen."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found")
    pytest.importorskip("playwright.sync_api")
    port = free_port()
    env = {"GRADVIZ_E2E_FOLDER": str(folder), "GRADVIZ_E2E_PRESET": "fast", **more_env}
    proc = start_streamlit(APP, port, env=env)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


@pytest.fixture
def server(tmp_path):
    with _serve(_folder(tmp_path / "data")) as url:
        yield url


@pytest.fixture
def subset_server():
    if not ((SUBSET / "train").is_dir() and (SUBSET / "test").is_dir()):
        pytest.skip(f"shared cifar10-subset not found at {SUBSET}")
    with _serve(SUBSET) as url:
        yield url


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
        finally:
            page.close()


def test_streamlit_stop_stops_the_run_and_train_starts_a_new_one(server, browser):
    """Streamlit's own Stop (top right) during a run: the page cannot draw any more, so the
    run is stopped too; the next interaction shows how it ended, and Train starts a new run
    whose results are its own (a lecturer once got the old run's "time limit reached")."""
    from playwright.sync_api import expect

    with contextlib.closing(
        browser.new_context(viewport={"width": 1400, "height": 1000})
    ) as context:
        try:
            page = context.new_page()
            page.goto(server)
            expect(page.get_by_text("200 training and 50 test images", exact=False)).to_be_visible(
                timeout=60_000
            )
            _set_number(page, "Epochs", "200")
            main = page.get_by_test_id("stMainBlockContainer")
            main.get_by_role("button", name="Train").click()
            expect(page.get_by_text("ETA", exact=False).first).to_be_visible(timeout=60_000)
            page.get_by_test_id("stStatusWidget").get_by_role("button", name="Stop").click()
            page.get_by_test_id("stStatusWidget").wait_for(state="hidden", timeout=30_000)
            # Nobody follows the run for ADOPT_S (3 s): it is stopped, and evaluates.
            page.wait_for_timeout(6000)
            _set_number(page, "Epochs", "3")  # any interaction runs the page again
            expect(page.get_by_text("the page was stopped", exact=False).first).to_be_visible(
                timeout=60_000
            )
            main.get_by_role("button", name="Train").click()
            expect(main.get_by_role("button", name="Stop")).to_be_visible(timeout=60_000)
            expect(main.get_by_role("button", name="Stop")).to_have_count(0, timeout=120_000)
            expect(page.locator(FRESH + METRIC, has_text="Test accuracy").first).to_be_visible(
                timeout=60_000
            )
            assert (
                page.locator(FRESH + '[data-testid="stAlert"]', has_text="ended early").count() == 0
            )
            expect(page.get_by_text("This session's runs")).to_be_visible()
            assert page.locator('[data-testid="stException"]').count() == 0
        finally:
            page.close()


def test_streamlit_stop_reaches_a_final_state_without_a_click(server, browser):
    """The lecturer's case: after Streamlit's own Stop the page stayed frozen on a stale
    "ETA 14 s" until the next click. Now, with no click, it shows how the run ended (stopped
    by the page's Stop, with the results so far) and no live status line."""
    from playwright.sync_api import expect

    with contextlib.closing(
        browser.new_context(viewport={"width": 1400, "height": 900})
    ) as context:
        try:
            page = context.new_page()
            page.goto(server)
            expect(page.get_by_text("200 training and 50 test images", exact=False)).to_be_visible(
                timeout=60_000
            )
            _set_number(page, "Epochs", "200")
            main = page.get_by_test_id("stMainBlockContainer")
            main.get_by_role("button", name="Train").click()
            expect(page.get_by_text("ETA", exact=False).first).to_be_visible(timeout=60_000)
            page.get_by_test_id("stStatusWidget").get_by_role("button", name="Stop").click()
            # No click from here on: the page runs again by itself once the run is stopped.
            expect(page.get_by_text("the page was stopped", exact=False).first).to_be_visible(
                timeout=60_000
            )
            expect(page.locator(FRESH + METRIC, has_text="Test accuracy").first).to_be_visible(
                timeout=60_000
            )
            expect(main.get_by_role("button", name="Stop")).to_have_count(0, timeout=30_000)
            expect(page.get_by_text("ETA", exact=False)).to_have_count(0, timeout=30_000)
            assert page.locator('[data-testid="stException"]').count() == 0
        finally:
            page.close()


def test_a_failed_run_leaves_the_page_quiet(tmp_path, browser):
    """After a failed run the page's timer (a fragment run every second while a run is
    followed) still asked the server to run it, and that run took the failure's message off
    the page. Now the page ends on the failure's message and the browser sends nothing more."""
    from playwright.sync_api import expect

    memory = {"GRADVIZ_TRAINING_MEMORY": "20000000"}  # 20 MB: the worker runs out of memory
    with (
        _serve(_folder(tmp_path / "data"), **memory) as url,
        contextlib.closing(browser.new_context(viewport={"width": 1400, "height": 900})) as context,
    ):
        page = context.new_page()
        sent = []  # messages from the browser to the server (each a request to run)
        page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(len(f))))
        try:
            page.goto(url)
            expect(page.get_by_text("200 training and 50 test images", exact=False)).to_be_visible(
                timeout=60_000
            )
            _set_number(page, "Batch size", "4096")
            page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train").click()
            failure = page.locator('[data-testid="stAlert"]', has_text="memory")
            expect(failure.first).to_be_visible(timeout=120_000)
            sent.clear()
            page.wait_for_timeout(5000)  # five of the timer's seconds
            # (before: a tick of the timer ran the fragment, and the message went with it)
            assert len(sent) == 0, f"{len(sent)} messages to the server after the failure"
            # the page's final drawing: the message, not faded as stale
            expect(
                page.locator(FRESH + '[data-testid="stAlert"]', has_text="memory")
            ).to_be_visible()
            assert page.locator('[data-testid="stException"]').count() == 0
        finally:
            page.close()


def _images_in(split: Path) -> int:
    return sum(
        1
        for d in split.iterdir()
        if d.is_dir()
        for f in d.iterdir()
        if f.suffix.lower() in IMAGE_SUFFIXES
    )


def test_real_cifar_subset_run_writes_screenshot(subset_server, browser):
    """A short fast-preset run on the real CIFAR-10 subset, followed live to its results: the
    page names the real folder and classes, and README's screenshot is taken of it."""
    from playwright.sync_api import expect

    classes = sorted(d.name for d in (SUBSET / "train").iterdir() if d.is_dir())  # ImageFolder
    assert classes == sorted(d.name for d in (SUBSET / "test").iterdir() if d.is_dir())
    assert len(classes) == 10 and {"airplane", "automobile"} <= set(classes)
    n_train, n_test = _images_in(SUBSET / "train"), _images_in(SUBSET / "test")
    main = '[data-testid="stMainBlockContainer"]'

    with contextlib.closing(
        browser.new_context(viewport={"width": 1400, "height": 1000})
    ) as context:
        try:
            page = context.new_page()
            page.goto(subset_server)
            expect(page.get_by_text("CIFAR-10 training").first).to_be_visible(timeout=60_000)
            expect(page.get_by_label("Folder", exact=True)).to_have_value(str(SUBSET))
            expect(
                page.get_by_text(
                    f"folder {SUBSET}: {n_train:,} training and {n_test:,} test images, "
                    f"{len(classes)} classes",
                    exact=False,
                )
            ).to_be_visible(timeout=60_000)

            # 2 epochs of the fast preset at batch 128: seconds on a 2-core CPU.
            _set_number(page, "Epochs", "2")
            _set_number(page, "Batch size", "128")
            page.locator(main).get_by_role("button", name="Train").click()
            stop_button = page.locator(main).get_by_role("button", name="Stop")
            expect(stop_button).to_be_visible(timeout=60_000)
            # While it trains: the live status line (epoch, images/s, ETA) and the live curves.
            expect(page.get_by_text("ETA", exact=False).first).to_be_visible(timeout=60_000)
            expect(page.locator(CHART).first).to_be_visible(timeout=60_000)
            expect(stop_button).to_have_count(0, timeout=120_000)
            expect(
                page.get_by_text(
                    f"Accuracy of the network on the {n_test} test images", exact=False
                ).first
            ).to_be_visible(timeout=60_000)
            expect(page.locator(FRESH + METRIC, has_text="Test accuracy").first).to_be_visible()
            assert page.locator('[data-testid="stException"]').count() == 0
            assert page.get_by_text("Training ended early", exact=False).count() == 0

            # The results are of the real classes, read from the folder: the per-class report
            # names each (airplane and automobile by the tutorial's short names, plane and car).
            report = page.locator(FRESH + '[data-testid="stCode"]').first.inner_text()
            shown = re.findall(r"Accuracy for class: (\S+)\s+is", report)
            assert shown == list(display_classes(tuple(classes))), report
            expect(
                page.get_by_text(f"fast preset, fast-cpu network, folder {SUBSET}")
            ).to_be_visible()
            confusion = page.locator('img[alt="confusion matrix of the test images"]')
            grid = page.locator('img[alt="test images with predicted and true labels"]')
            expect(confusion).to_have_count(1)
            expect(grid).to_have_count(1)
            assert page.locator(CHART).count() >= 2  # loss and accuracy curves
            text = page.locator(main).inner_text()
            assert "/tmp" not in text and "pytest" not in text

            # README's picture: from the top of the page down to the predictions (the
            # download button under them), every image and chart painted.
            page.set_viewport_size({"width": 1400, "height": 2600})
            page.wait_for_function(
                """() => [...document.querySelectorAll('img')].every(
                    (i) => i.complete && i.naturalWidth > 0)"""
            )
            page.wait_for_timeout(2000)
            download = page.get_by_role("button", name="Download weights (state_dict)")
            box = download.bounding_box()
            assert box is not None
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(
                path=str(SCREENSHOT),
                full_page=True,
                clip={"x": 0, "y": 0, "width": 1400, "height": box["y"] + box["height"] + 12},
            )
        finally:
            page.close()
