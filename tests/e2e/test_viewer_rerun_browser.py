"""Real browser: the autograd page's viewer keeps its place across a rerun with a small change.
Graphviz lays the graph out again on every run; the viewer puts the tensor that was nearest the
frame's centre back on the same spot of the screen at the same zoom (gradviz.graph.assets's
viewer.js, restoreView), instead of the frame's pan and zoom, which point elsewhere once the
drawing has grown."""

from __future__ import annotations

import math

import pytest
from e2e_support import type_program

from gradviz.graph.render import dot_available
from gradviz.program.presets import PRESETS_BY_KEY

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]

MOVED_PX = 3  # the anchored tensor's largest move on the screen across the rerun

DRAWN_JS = """(name) => [...document.querySelectorAll('iframe')].some(f => {
  const m = f.srcdoc && f.srcdoc.match(/id="gv-data">([\\s\\S]*?)<\\/script>/);
  if (!m) return false;
  const d = JSON.parse(m[1]);
  return Object.values(d.nodes).some(n => n.t && n.t.name === name && n.t.grad);
})"""

# Where each tensor's node is in the frame (its centre, CSS pixels), by label.
CENTRES_JS = """() => {
  const box = document.querySelector('#gv-graph svg').getBoundingClientRect(), out = {};
  document.querySelectorAll('g.node').forEach(g => {
    const t = g.querySelector('text'); if (!t) return;
    const b = g.getBoundingClientRect();
    out[t.textContent.split(/\\s/)[0]] = [b.left + b.width / 2 - box.left, b.top + b.height / 2 - box.top];
  });
  return out;
}"""

# What the viewer did before it kept an anchor: the kept relative zoom and pan, as they were.
OLD_RESTORE_JS = (
    """(kept) => { window.gvPanZoom.zoom(kept.zoom); window.gvPanZoom.pan(kept.pan); }"""
)
KEPT_JS = "() => JSON.parse(sessionStorage.getItem('gradviz-view'))"


def _frame(page):
    frame = page.frame_locator("iframe").first
    frame.locator("body[data-gv-ready='1']").wait_for(timeout=90_000)
    return page.locator("iframe").first.element_handle().content_frame()


def _moves(before: dict, after: dict) -> dict[str, float]:
    return {k: math.dist(before[k], after[k]) for k in before if k in after}


def test_a_line_added_at_the_end_leaves_the_view_on_the_same_tensor(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1300})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        page.get_by_role("button", name="Run backward").click()
        page.wait_for_function(DRAWN_JS, arg="x", timeout=90_000)
        inner = _frame(page)
        x = inner.locator("g.node").filter(has=inner.locator("text >> text=/^x\\b/"))
        for _ in range(3):
            inner.locator("#gv-zoom-in").click()
        x.wait_for()
        # pan x to the middle of the frame: the tensor nearest the centre is the anchor
        inner.evaluate(
            """() => { const pz = window.gvPanZoom, box = document.querySelector('#gv-graph svg')
              .getBoundingClientRect(); const x = [...document.querySelectorAll('g.node')]
              .find(g => /^x\\b/.test(g.querySelector('text').textContent)).getBoundingClientRect();
              pz.panBy({x: box.left + box.width / 2 - (x.left + x.width / 2),
                        y: box.top + box.height / 2 - (x.top + x.height / 2)}); }"""
        )
        page.wait_for_timeout(400)  # the view is written 120 ms after the last move
        before = inner.evaluate(CENTRES_JS)
        kept = inner.evaluate(KEPT_JS)
        assert kept["anchor"]["title"] == "x"
        source = PRESETS_BY_KEY["lesson"].source.rstrip("\n") + "\nw = y * 3\n"
        type_program(page, source)
        page.get_by_role("button", name="Run program").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('iframe')].some(f => f.srcdoc"
            ' && f.srcdoc.includes(\'"name":"w"\'))',
            timeout=90_000,
        )
        inner = _frame(page)
        after = inner.evaluate(CENTRES_JS)
        assert "w" in after and "w" not in before
        moved = _moves(before, after)
        inner.evaluate(OLD_RESTORE_JS, kept)
        page.wait_for_timeout(300)  # svg-pan-zoom writes its transform on the next frame
        old = _moves(before, inner.evaluate(CENTRES_JS))
        print(f"\nanchored: {moved}\nkept pan and zoom only: {old}")
        assert moved["x"] < MOVED_PX
        # the measure has teeth: without the anchor the same rerun moves x much further
        assert old["x"] > 4 * MOVED_PX
    finally:
        page.close()
