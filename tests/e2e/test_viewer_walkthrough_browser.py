"""Real browser, 1400x900 and 1024x768: the viewer stays drawn after the backward walk-through.
A step chosen on the walk-through tab redraws the graph (the step's node highlighted) while the
Graph tab is hidden; back on the Graph tab the viewer's frame must show its nodes, after each
step and after a rerun, not an empty frame ("9 of 9 nodes drawn" over nothing); stepping with
the buttons under the graph redraws the viewer in place."""

from __future__ import annotations

import pytest

from gradviz.graph.render import dot_available

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]

BACKWARD_DRAWN_JS = """() => [...document.querySelectorAll('iframe.gv-frame')].some(f => {
  const m = f.srcdoc && f.srcdoc.match(/id="gv-data">([\\s\\S]*?)<\\/script>/);
  if (!m) return false;
  const d = JSON.parse(m[1]);
  return Object.values(d.nodes).some(n => n.t && n.t.name === 'x' && n.t.grad);
})"""

# The frame's nodes drawn inside it: a nonzero box that overlaps the visible graph area,
# itself inside the page's window. Returns [drawn, total, frame height on the page].
VISIBLE_JS = """() => {
  const f = [...document.querySelectorAll('iframe.gv-frame')].find(f => f.offsetParent);
  if (!f) return [0, 0, 0];
  const outer = f.getBoundingClientRect();
  const doc = f.contentDocument;
  if (!doc || !doc.body || doc.body.dataset.gvReady !== '1') return [0, 0, outer.height];
  const area = doc.querySelector('#gv-graph').getBoundingClientRect();
  const nodes = [...doc.querySelectorAll('#gv-graph g.node')];
  const drawn = nodes.filter(g => {
    const b = g.getBoundingClientRect();
    return b.width > 1 && b.height > 1 && b.right > area.left && b.left < area.right
      && b.bottom > area.top && b.top < area.bottom && area.width > 10 && area.height > 10;
  });
  return [drawn.length, nodes.length, outer.height];
}"""


# A fitted view keeps node text readable (graph.interactive.MIN_TEXT_PX): a tall graph in a
# short frame shows its top part, panned to see the rest. At least this many nodes in view.
IN_VIEW = 4


# The frame's node of the walk-through's step (the viewer's data.focus) lies inside its area.
FOCUS_JS = """() => {
  const f = [...document.querySelectorAll('iframe.gv-frame')].find(f => f.offsetParent);
  const doc = f && f.contentDocument;
  if (!doc || !doc.body || doc.body.dataset.gvReady !== '1') return false;
  const focus = JSON.parse(doc.getElementById('gv-data').textContent).focus;
  const g = [...doc.querySelectorAll('#gv-graph g.node')]
    .find(g => g.querySelector('title').textContent === focus);
  if (!g) return false;
  const a = doc.querySelector('#gv-graph').getBoundingClientRect(), b = g.getBoundingClientRect();
  return b.width > 1 && b.top >= a.top && b.bottom <= a.bottom && b.left >= a.left
    && b.right <= a.right;
}"""


def _all_drawn(page, where: str) -> None:
    """Wait until the shown frame has its nodes drawn in view; fail with what was seen."""
    try:
        page.wait_for_function(
            f"() => {{ const [d, n, h] = ({VISIBLE_JS})(); return n > 0 && d >= {IN_VIEW} && h > 100; }}",
            timeout=60_000,
        )
    except Exception as exc:  # noqa: BLE001 - the assertion below says what was seen
        seen = page.evaluate(VISIBLE_JS)
        raise AssertionError(f"{where}: [drawn, nodes, frame height] = {seen}") from exc


def _step(page, k: int) -> None:
    page.get_by_role("tab", name="Backward walk-through").click()
    slider = page.get_by_role("slider", name="Step")
    slider.wait_for(timeout=60_000)
    slider.focus()
    slider.press("ArrowRight")
    page.get_by_text(f"Step {k}:").first.wait_for(timeout=60_000)


@pytest.mark.parametrize("size", [(1400, 900), (1024, 768)])
def test_the_viewer_is_drawn_after_walk_through_steps_and_reruns(browser, app_server, size):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        page.get_by_role("button", name="Run backward").click()
        page.wait_for_function(BACKWARD_DRAWN_JS, timeout=90_000)
        _all_drawn(page, "first view")
        for k in (1, 2):
            _step(page, k)
            page.get_by_role("tab", name="Graph").click()
            page.get_by_text(f"Highlighted: step {k} ").first.wait_for(timeout=60_000)
            _all_drawn(page, f"back from step {k}")
        page.get_by_role("button", name="Run program").click()  # a rerun, same program
        page.wait_for_timeout(1_000)
        _all_drawn(page, "rerun")
        _step(page, 3)
        page.get_by_role("button", name="Run program").click()  # a rerun on the other tab
        page.wait_for_timeout(1_000)
        page.get_by_role("tab", name="Graph").click()
        page.get_by_text("Highlighted: step 3 ").first.wait_for(timeout=60_000)
        _all_drawn(page, "back from a rerun on the walk-through")
        # stepping under the graph: the same viewer, redrawn in view with the step's node
        page.locator(".st-key-step_ahead button").first.click()
        page.get_by_text("Walk-through step 4 of 5").first.wait_for(timeout=60_000)
        _all_drawn(page, "a step under the graph")
        for k in (3, 2, 1):  # back to MeanBackward0, at the graph's foot
            page.locator(".st-key-step_back button").first.click()
            page.get_by_text(f"Walk-through step {k} of 5").first.wait_for(timeout=60_000)
        _all_drawn(page, "step 1 under the graph")
        page.wait_for_function(FOCUS_JS, timeout=60_000)  # the step's node is in view
    finally:
        page.close()
