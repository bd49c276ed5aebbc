"""Real browser: a click on a node in the autograd page's viewer comes back to the page
(st.components.v2, graph/assets/bridge.js), which marks that node's line in the program: in
the code editor (tests/e2e/test_code_editor_browser.py), or with the plain text editor
chosen, in a copy of the program beside the graph (here)."""

from __future__ import annotations

import pytest
from e2e_support import program_editor

from gradviz.graph.render import dot_available

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]


def _viewer(page):
    frame = page.frame_locator("iframe").first
    frame.locator("body[data-gv-ready='1']").wait_for(timeout=90_000)
    return frame


def _marked(page) -> str:
    code = page.locator('[data-testid="stCode"]').filter(has_text="▶")
    code.first.wait_for(timeout=60_000)
    return code.first.inner_text()


def test_clicking_a_node_marks_its_line_in_the_program(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1300})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        program_editor(page)
        page.get_by_text("Plain text editor").click()
        # the code editor leaves, the text area it hid is back
        page.locator(".gv-editor").wait_for(state="detached", timeout=60_000)
        page.locator("textarea").first.wait_for(timeout=60_000)
        frame = _viewer(page)
        assert page.get_by_text("Clicked in the graph").count() == 0
        frame.locator("g.node").filter(has=frame.locator("text >> text=/^b\\b/")).click()
        page.get_by_text("Clicked in the graph: b, made on line 4").wait_for(timeout=60_000)
        lines = [ln for ln in _marked(page).splitlines() if ln.startswith("▶")]
        assert lines == ["▶ 4  b = a ** 2"]
        # a backward function marks the line of the tensor it made: MeanBackward0 made y
        frame = _viewer(page)
        # the viewer keeps text readable: the graph's foot may be below the frame; search pans to it
        frame.locator("#gv-search").fill("MeanBackward0")
        frame.locator("g.node").filter(has=frame.locator("text >> text=/^MeanBackward0/")).click()
        page.get_by_text("Clicked in the graph: MeanBackward0, made on line 6").wait_for(
            timeout=60_000
        )
        assert [ln for ln in _marked(page).splitlines() if ln.startswith("▶")] == [
            "▶ 6  y = c.mean()"
        ]
        # the page's rerun left the viewer as it was: its own inspector still shows the node
        assert "MeanBackward0" in _viewer(page).locator("#gv-inspector").inner_text()
    finally:
        page.close()
