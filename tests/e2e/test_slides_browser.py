"""Real browser: the Export tab's walk-through for slides downloads as a PDF with a page per
backward step plus the final graph, and as an animated GIF with as many frames (made when the
button is clicked; the GIF by a job worker)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader

from gradviz.graph.render import dot_available
from gradviz.program.presets import PRESETS_BY_KEY

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]


SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "slide.png"


def _download(page, label: str, target):
    button = page.get_by_role("button", name=label)
    button.wait_for(timeout=90_000)
    with page.expect_download(timeout=90_000) as info:
        button.click()
    info.value.save_as(target)
    return target


def test_the_walk_through_downloads_as_pdf_pages_and_gif_frames(browser, app_server, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1300}, accept_downloads=True)
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        page.get_by_role("button", name="Run backward").click()
        page.get_by_role("tab", name="Export").click()
        caption = page.get_by_text("pages or frames: one per backward step")
        caption.wait_for(timeout=90_000)
        count = int(caption.inner_text().split()[0])
        pdf = _download(page, "Download walk-through PDF", tmp_path / "walk.pdf")
        gif = _download(page, "Download walk-through GIF", tmp_path / "walk.gif")
    finally:
        page.close()
    assert (
        count == 6
    )  # the lesson's backward: five functions (x's AccumulateGrad too), the whole graph
    assert len(PdfReader(pdf).pages) == count
    with Image.open(gif) as im:
        assert im.format == "GIF" and im.n_frames == count


def test_the_tutorial_net_downloads_as_one_1920x1080_slide(browser, app_server, tmp_path):
    net = PRESETS_BY_KEY["tutorial_net"]
    page = browser.new_page(viewport={"width": 1400, "height": 1300}, accept_downloads=True)
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        select = page.locator('[data-testid="stSelectbox"]').filter(has_text="Preset")
        select.locator("input").click()
        page.get_by_role("option", name=net.title).click()
        page.get_by_role("tab", name="Export").click()
        page.get_by_text("png", exact=True).click()
        page.get_by_text("Slide (16:9)", exact=True).click()
        page.get_by_alt_text("slide preview").wait_for(timeout=120_000)
        caption = page.get_by_text("smallest text").inner_text()
        slide = _download(page, "Download slide PNG", tmp_path / "slide.png")
    finally:
        page.close()
    assert caption.startswith("1 slide"), caption
    assert float(caption.split("smallest text ")[1].split(" px")[0]) >= 18, caption
    with Image.open(slide) as im:
        assert im.size == (1920, 1080)
    SCREENSHOT.write_bytes(slide.read_bytes())  # README's picture of a slide
