"""Real browser, 1400x900: a new graph opens fitted to its own size, not in the zoom and pan of
the graph before; its text no smaller than graph.interactive.MIN_TEXT_PX (a wide graph is panned
across, not shrunk past reading); the frame ends inside the window; and the same graph run again
(other values, same nodes and edges) keeps the view the visitor chose."""

from __future__ import annotations

import pytest
from e2e_support import type_program

from gradviz.graph.interactive import MIN_TEXT_PX
from gradviz.graph.render import dot_available
from gradviz.program.presets import PRESETS_BY_KEY

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]

FRAME = "iframe.gv-frame"

# A frame whose document is a new one (not marked by _mark) and ready, holding `name`.
NEW_READY_JS = """(name) => [...document.querySelectorAll('iframe.gv-frame')].some(f => {
  const w = f.contentWindow, d = f.contentDocument;
  return w && !w.gvOld && d && d.body && d.body.dataset.gvReady === '1'
    && f.srcdoc.includes('"name":"' + name + '"');
})"""

# In the frame: [nodes in view, nodes, median node text size on screen (px), scale, pan x, y].
VIEW_JS = """() => {
  const area = document.querySelector('#gv-graph').getBoundingClientRect();
  const nodes = [...document.querySelectorAll('#gv-graph g.node')];
  const inside = nodes.filter(g => { const b = g.getBoundingClientRect();
    return b.width > 0 && b.left >= area.left - 1 && b.right <= area.right + 1
      && b.top >= area.top - 1 && b.bottom <= area.bottom + 1; }).length;
  const sizes = [...document.querySelectorAll('#gv-graph g.node text')]
    .map(t => parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a)
    .filter(s => s > 0).sort((a, b) => a - b);
  const pz = window.gvPanZoom, pan = pz.getPan();
  return [inside, nodes.length, sizes[Math.floor(sizes.length / 2)], pz.getSizes().realZoom,
          pan.x, pan.y];
}"""


def _mark(page) -> None:
    """Mark the shown frame's document: a new one loaded in its place has no mark."""
    page.locator(FRAME).element_handle().content_frame().evaluate("() => { window.gvOld = 1; }")


def _inner(page, name: str):
    page.wait_for_function(NEW_READY_JS, arg=name, timeout=90_000)
    inner = page.locator(FRAME).element_handle().content_frame()
    page.wait_for_timeout(300)  # svg-pan-zoom writes its transform on the next frame
    return inner


def _zoom_in(page, inner, times: int) -> None:
    for _ in range(times):
        inner.locator("#gv-zoom-in").click()
    page.wait_for_timeout(500)  # the view is kept 120 ms after the last move


def _run(page, source: str) -> None:
    _mark(page)
    type_program(page, source)  # the code editor (the text area is hidden behind it)
    page.get_by_role("button", name="Run program").click()


def test_a_new_graph_opens_fitted_and_the_same_graph_keeps_its_zoom(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        inner = _inner(page, "x")
        frame = page.locator(FRAME).bounding_box()
        assert frame["y"] + frame["height"] <= 900, frame  # the whole frame in the window
        _zoom_in(page, inner, 3)
        zoomed = inner.evaluate(VIEW_JS)
        mlp = PRESETS_BY_KEY["sequential_mlp"].source
        _run(page, mlp)
        inner = _inner(page, "net.0.weight")
        opened = inner.evaluate(VIEW_JS)
        inner.locator("#gv-fit").click()
        page.wait_for_timeout(400)
        fitted = inner.evaluate(VIEW_JS)
        print(f"\nlesson zoomed {zoomed}\nMLP opened {opened}\nMLP fitted {fitted}")
        assert opened[3] == pytest.approx(fitted[3], rel=0.02)  # opened as Fit shows it
        assert opened[4:] == pytest.approx(fitted[4:], abs=2)
        inside, total, text = fitted[:3]
        assert inside == total or text >= MIN_TEXT_PX - 0.5, fitted
        assert text >= min(MIN_TEXT_PX, opened[2]) - 0.5  # Fit never shrinks text below it
        # the same program again, other values (same nodes and edges): the zoom is kept
        _zoom_in(page, inner, 2)
        chosen = inner.evaluate(VIEW_JS)
        _run(page, mlp.replace("manual_seed(0)", "manual_seed(1)"))
        inner = _inner(page, "net.0.weight")
        again = inner.evaluate(VIEW_JS)
        assert again[3] == pytest.approx(chosen[3], rel=0.02), (chosen, again)
        assert again[4:] == pytest.approx(chosen[4:], abs=2)
    finally:
        page.close()
