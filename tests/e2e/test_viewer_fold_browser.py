"""Real browser: closing a layer in the autograd page's viewer draws it again as one small
node (the server folds that layer call, gradviz.graph.collapse.fold_calls, and lays the smaller
graph out anew), so the drawing shrinks; clicking the folded node opens it again."""

from __future__ import annotations

import re

import pytest
from e2e_support import MLP, type_program

from gradviz.graph.render import dot_available

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]


# The viewer document in the page's frame: Graphviz's drawing size (points) and node count.
SIZE_JS = """(want) => {
  const f = [...document.querySelectorAll('iframe')].find(f => f.srcdoc && f.srcdoc.includes('gv-data'));
  if (!f) return null;
  const m = f.srcdoc.match(/<svg width="([0-9.]+)pt" height="([0-9.]+)pt"/);
  const folded = f.srcdoc.includes('<title>fold_');
  if (!m || (want !== null && folded !== want)) return null;
  return [parseFloat(m[1]), parseFloat(m[2]), (f.srcdoc.match(/class="node"/g) || []).length];
}"""


def _size(page, folded: bool) -> list[float]:
    return page.wait_for_function(SIZE_JS, arg=folded, timeout=90_000).json_value()


def _viewer(page):
    frame = page.frame_locator("iframe").first
    frame.locator("body[data-gv-ready='1']").wait_for(timeout=90_000)
    return frame


def test_closing_a_layer_draws_it_as_one_node_and_the_drawing_shrinks(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1300})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        type_program(page, MLP)
        page.get_by_role("button", name="Run program").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('iframe')].some(f => f.srcdoc"
            " && f.srcdoc.includes('cluster_m'))",
            timeout=90_000,
        )
        w0, h0, n0 = _size(page, False)
        frame = _viewer(page)
        outer = frame.locator("g.cluster").filter(has=frame.locator("title", has_text="cluster_m"))
        outer.first.locator("text").first.click()
        w1, h1, n1 = _size(page, True)
        print(
            f"\nopen: {w0:.0f} x {h0:.0f} pt, {n0} nodes; closed: {w1:.0f} x {h1:.0f} pt, {n1} nodes"
        )
        assert n1 < n0 and w1 * h1 < 0.8 * w0 * h0
        frame = _viewer(page)
        fold = frame.locator("g.node").filter(
            has=frame.locator("title", has_text=re.compile("^fold_"))
        )
        assert fold.count() == 1 and "nodes)" in fold.first.text_content()
        fold.first.click()  # open it again: the whole drawing comes back
        assert _size(page, False) == [w0, h0, n0]
    finally:
        page.close()
