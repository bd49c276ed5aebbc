"""Real browser: the Export tab's walk-through for slides downloads as a PDF with a page per
backward step plus the final graph, and as an animated GIF with as many frames (made when the
button is clicked; the GIF by a job worker)."""

from __future__ import annotations

import pytest
from PIL import Image
from pypdf import PdfReader

from gradviz.graph.render import dot_available

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]


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
