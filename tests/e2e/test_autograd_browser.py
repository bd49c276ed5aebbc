"""Real browser: the autograd page draws the lesson and exports a valid SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from e2e_support import graph_svg, program_editor

pytestmark = pytest.mark.e2e
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def test_lesson_graph_renders_and_svg_downloads(browser, app_server, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1300}, accept_downloads=True)
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        svg_text = graph_svg(page, "PowBackward0")
        assert "2.0000, 2.6667, 3.3333" not in svg_text  # the forward graph first
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=120_000)
        page.get_by_role("button", name="Run backward").click()
        svg_text = graph_svg(page, "2.0000, 2.6667, 3.3333")
        for label in ("MeanBackward0", "AddBackward0"):
            assert label in svg_text
        # The share link is in the address bar.
        assert "p=" in page.url
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        # the README picture: wait for the widgets too (they load after the graph when busy)
        program_editor(page, timeout=30_000)
        page.get_by_role("button", name="Run backward").wait_for(timeout=30_000)
        page.screenshot(path=str(SCREENSHOTS / "autograd.png"), full_page=False)

        page.get_by_role("tab", name="Export").click()
        button = page.get_by_role("button", name="Download SVG")
        button.wait_for(timeout=30_000)
        with page.expect_download(timeout=30_000) as info:
            button.click()
        target = tmp_path / "graph.svg"
        info.value.save_as(target)
        data = target.read_bytes()
        root = ET.fromstring(data)  # well-formed XML
        assert root.tag.endswith("svg")
        assert b"PowBackward0" in data and b"MeanBackward0" in data
    finally:
        page.close()


def test_share_link_opens_same_graph(browser, app_server):
    from gradviz.program.share import encode_program

    program = "p = torch.tensor([2.0], requires_grad=True)\nq = p ** 3\n"
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(
            f"{app_server}/?p={encode_program(program)}&backward=q&dir=LR",
            wait_until="domcontentloaded",
        )
        assert "PowBackward0" in graph_svg(page, "12.0000")
    finally:
        page.close()
