"""Real browser: the autograd page's first graph fits the window (its text readable), a narrow window keeps the
controls readable, typed work survives a trip to another page through the sidebar, and the
graph follows a dark page."""

from __future__ import annotations

import pytest
from e2e_support import editor_text, graph_svg, program_editor, type_program

from gradviz.graph.interactive import MIN_TEXT_PX

pytestmark = pytest.mark.e2e

PROGRAM = "w = torch.tensor([1.0, -2.0], requires_grad=True)\nq = (w * w * w).sum()\n"


def _idle(page) -> None:
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=120_000)


def test_first_graph_is_in_view_on_a_1400x1000_window(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        svg = graph_svg(page, "MeanBackward0")
        assert "y = " in svg  # the lesson's output is in the drawing
        _idle(page)
        # The graph the visitor sees first is the interactive viewer (the plain picture is
        # folded below it): its frame, fitted to the drawing, is whole in the window.
        frame = page.frame_locator("iframe").first
        frame.locator("body[data-gv-ready='1']").wait_for(timeout=90_000)
        box = page.locator("iframe").first.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 200
        assert page.evaluate("() => window.scrollY") == 0
        assert box["x"] >= 0 and box["y"] >= 0
        assert box["x"] + box["width"] <= 1400
        assert box["y"] + box["height"] <= 1000, box
        # the drawing itself (after Fit) lies inside the frame, or, where that would draw its
        # text under MIN_TEXT_PX, starts at the frame's top with its text at that size
        inner = page.locator("iframe").first.element_handle().content_frame()
        assert "y = " in inner.evaluate(
            "() => document.querySelector('#gv-graph svg, svg').textContent"
        )
        drawn = inner.evaluate(
            "() => { const r = document.querySelector('g.svg-pan-zoom_viewport')"
            ".getBoundingClientRect(); const t = document.querySelector('g.node text');"
            " return [r.top, r.bottom, innerHeight,"
            " parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a]; }"
        )
        assert drawn[0] >= 0, drawn
        assert drawn[1] <= drawn[2] + 1 or drawn[3] == pytest.approx(MIN_TEXT_PX, abs=0.1), drawn
    finally:
        page.close()


def test_narrow_window_folds_the_sidebar_and_keeps_button_labels_whole(browser, app_server):
    page = browser.new_page(viewport={"width": 800, "height": 1000})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        graph_svg(page)
        _idle(page)
        button = page.get_by_role("button", name="Run backward")
        button.wait_for(timeout=30_000)
        sidebar = page.locator('[data-testid="stSidebar"]')
        page.wait_for_function(
            "() => document.querySelector('[data-testid=stSidebar]')?.dataset.collapsed === 'true'",
            timeout=30_000,
        )
        box = sidebar.bounding_box()
        assert box is None or box["x"] + box["width"] <= 1, box  # off the screen
        _idle(page)
        for name in ("Run backward", "Run program"):
            button = page.get_by_role("button", name=name)
            paragraph = button.locator("p")  # Streamlit's label; the code editor's is the button
            label = paragraph.first if paragraph.count() else button
            whole = label.evaluate("(e) => e.scrollWidth <= e.clientWidth + 1")
            assert whole, f"the button '{name}' is cut short"
    finally:
        page.close()


def test_typed_program_survives_a_visit_to_another_page(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        graph_svg(page)
        _idle(page)
        type_program(page, PROGRAM)
        page.get_by_role("button", name="Run program").click()
        graph_svg(page, "q = ")
        _idle(page)
        page.get_by_role("button", name="Run backward").click()
        graph_svg(page, "3.0000, 12.0000")
        _idle(page)
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.get_by_text("Devices", exact=True).click()
        page.get_by_role("heading", name="Devices").first.wait_for(timeout=60_000)
        _idle(page)
        nav.get_by_text("Autograd", exact=True).click()
        svg = graph_svg(page, "3.0000, 12.0000")  # the program and its backward came back
        assert "q = " in svg
        program_editor(page)
        assert editor_text(page) == PROGRAM
    finally:
        page.close()


def test_graph_follows_a_dark_page(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, color_scheme="dark")
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        assert "#1e1e1e" in graph_svg(page, "#1e1e1e")  # the dark theme's background
        assert "theme" not in page.url  # followed, not chosen
    finally:
        page.close()
