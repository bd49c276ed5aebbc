"""Real browser: the backward walk-through's gradient travels along the graph's edges. A step
under the graph draws a dot moving along each edge from the step's function back to the
inputs it gives a gradient (the edge marked while it moves), then marks those inputs and
writes the gradient beside the edge; with reduced motion asked for, no dot, only the marks.
A step travels once: the frame drawn again at the same step (another choice on the page, the
tab reloaded) shows the step's end without the dot; the next step, a step gone back to and
another program's steps travel.
And the viewer's toolbar keeps to one line at 1024 and 1400 px."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from e2e_support import type_program

from gradviz.graph.render import dot_available
from gradviz.program.presets import PRESETS_BY_KEY

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]

# Where a picture of a step mid-way and of the toolbar goes (none unless asked for).
PICTURES = os.environ.get("GRADVIZ_E2E_PICTURES")
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "walkthrough.png"

BACKWARD_DRAWN_JS = """() => [...document.querySelectorAll('iframe.gv-frame')].some(f => {
  const m = f.srcdoc && f.srcdoc.match(/id="gv-data">([\\s\\S]*?)<\\/script>/);
  if (!m) return false;
  const d = JSON.parse(m[1]);
  return Object.values(d.nodes).some(n => n.t && n.t.name === 'x' && n.t.grad);
})"""

# Every frame records each dot added to its drawing and the edge it was added to.
WATCH_DOTS = """(() => {
  window.__gvDots = [];
  new MutationObserver((records) => records.forEach((r) => r.addedNodes.forEach((n) => {
    if (n.nodeType === 1 && n.classList.contains('gv-flow-dot')) {
      const g = n.parentNode, title = g && g.querySelector('title');
      window.__gvDots.push([title ? title.textContent : '', g.classList.contains('gv-flowing')]);
    }
  }))).observe(document, { childList: true, subtree: true });
})();"""

# The shown frame's viewer document: (ready, flowed edges, dots now, dots seen, received, grads).
STATE_JS = """() => {
  const f = [...document.querySelectorAll('iframe.gv-frame')].find(f => f.offsetParent);
  const doc = f && f.contentDocument;
  if (!doc || !doc.body) return null;
  const title = (g) => g.querySelector('title').textContent;
  return {
    focus: (JSON.parse(doc.getElementById('gv-data').textContent).focus),
    ready: doc.body.dataset.gvReady === '1',
    flowed: doc.body.dataset.gvFlowed || null,
    dots: doc.querySelectorAll('.gv-flow-dot').length,
    flowing: [...doc.querySelectorAll('g.edge.gv-flowing')].map(title),
    seen: f.contentWindow.__gvDots || null,
    received: [...doc.querySelectorAll('g.node.gv-received')].map(title),
    grads: [...doc.querySelectorAll('text.gv-flow-grad')].map(t => t.textContent),
  };
}"""


def _open(browser, app_server, size, reduced: bool):
    context = browser.new_context(
        viewport={"width": size[0], "height": size[1]},
        reduced_motion="reduce" if reduced else "no-preference",
    )
    context.add_init_script(WATCH_DOTS)
    page = context.new_page()
    page.goto(app_server + "/", wait_until="domcontentloaded")
    page.get_by_role("button", name="Run backward").click()
    page.wait_for_function(BACKWARD_DRAWN_JS, timeout=90_000)
    return page


def _step_ahead(page, k: int, focus: str, steps: int = 5) -> None:
    page.locator(".st-key-step_ahead button").first.click()
    page.get_by_text(f"Walk-through step {k} of {steps}").first.wait_for(timeout=60_000)
    page.wait_for_function(
        f"() => {{ const s = ({STATE_JS})(); return s && s.focus === '{focus}' && s.ready; }}",
        timeout=60_000,
    )


def _arrived(page, edge: str) -> dict:
    page.wait_for_function(
        f"() => {{ const s = ({STATE_JS})(); return s && s.flowed === '{edge}'; }}",
        timeout=30_000,
    )
    return page.evaluate(STATE_JS)


def test_a_step_sends_its_gradient_along_the_edge_to_its_input(browser, app_server):
    page = _open(browser, app_server, (1400, 900), reduced=False)
    try:
        # step 1: MeanBackward0 (f0) gives c (t3) its gradient, along the edge c -> mean
        _step_ahead(page, 1, "f0")
        if PICTURES:  # mid-way, if the machine is quick enough to catch it
            page.screenshot(path=os.path.join(PICTURES, "viewer-flow-step.png"))
        state = _arrived(page, "t3->f0")
        assert state["seen"], "the viewer's frame was not watched"
        assert {edge for edge, _ in state["seen"]} == {"t3->f0"}
        assert all(flowing for _, flowing in state["seen"])  # the edge marked while it moves
        assert state["dots"] == 0 and state["flowing"] == []  # gone once it arrived
        assert state["received"] == ["t3"]
        assert state["grads"] == ["grad [0.3333, 0.3333, 0.3333]"]
        # step 2: AddBackward0 (f1) passes it on to b (t2)
        _step_ahead(page, 2, "f1")
        state = _arrived(page, "t2->f1")
        assert {edge for edge, _ in state["seen"]} == {"t2->f1"}
        assert state["dots"] == 0 and state["received"] == ["t2"]
        page.mouse.move(0, 0)  # no button's tooltip over README's picture of a step
        page.wait_for_timeout(400)
        page.locator("iframe.gv-frame:visible").first.screenshot(path=str(SCREENSHOT))
    finally:
        page.context.close()


# x goes into MulBackward0 twice (x * x, one edge drawn) and into AddBackward0 as well; w
# into MmBackward0 twice (its two gradients are longer than a label: cut short with …)
TWICE = (
    "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * x + x\nz = y.sum()\nz.backward()\n"
)
MATRIX = (
    "w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\n"
    "y = (w @ w + w).sum()\n"
    "y.backward()\n"
)
MATRIX_GRADS = "grad [[3.0000, 7.0000], [3.0000, 7.0000]] + [[4.0000, 4.0000], [6.0000, 6.0000]]"


@pytest.mark.parametrize(
    ("source", "label", "leaf"),
    [
        (TWICE, "grad [1.0000, 2.0000] + [1.0000, 2.0000]", "x"),
        (MATRIX, MATRIX_GRADS[:64] + "…", "w"),
    ],
)
def test_an_input_taken_twice_gets_its_gradients_written_on_its_one_edge(
    browser, app_server, source, label, leaf
):
    page = _open(browser, app_server, (1400, 900), reduced=True)
    try:
        _mark_frames(page)
        type_program(page, source)
        page.get_by_role("button", name="Run program").click()
        page.wait_for_function(RELOADED_JS, timeout=90_000)
        page.wait_for_function(BACKWARD_DRAWN_JS.replace("'x'", f"'{leaf}'"), timeout=90_000)
        # step 3: the product (f3) gives the leaf (t0) a gradient for each of its two inputs
        for k, focus in ((1, "f0"), (2, "f1"), (3, "f3")):
            _step_ahead(page, k, focus, steps=4)
        state = _arrived(page, "t0->f3")
        assert state["received"] == ["t0"]
        assert state["grads"] == [label]
    finally:
        page.context.close()


def test_with_reduced_motion_a_step_marks_the_input_without_moving(browser, app_server):
    page = _open(browser, app_server, (1400, 900), reduced=True)
    try:
        _step_ahead(page, 1, "f0")
        state = _arrived(page, "t3->f0")
        assert state["seen"] == []  # no dot was ever drawn
        assert state["flowing"] == [] and state["received"] == ["t3"]
        assert state["grads"] == ["grad [0.3333, 0.3333, 0.3333]"]
    finally:
        page.context.close()


# The toolbar's controls: [tag, top, bottom, left, right] each, and the bar's own box.
BAR_JS = """() => {
  const f = [...document.querySelectorAll('iframe.gv-frame')].find(f => f.offsetParent);
  const doc = f && f.contentDocument;
  if (!doc || !doc.body || doc.body.dataset.gvReady !== '1') return null;
  const bar = doc.getElementById('gv-bar').getBoundingClientRect();
  const controls = [...doc.querySelectorAll('#gv-bar button, #gv-bar input, #gv-bar select')]
    .filter(e => e.offsetParent)
    .map(e => { const b = e.getBoundingClientRect();
      return [e.id || e.tagName, b.top + b.height / 2, b.left, b.right]; });
  return { bar: [bar.left, bar.right, bar.height], controls: controls };
}"""


@pytest.mark.parametrize("size", [(1024, 768), (1400, 900)])
def test_the_toolbar_is_one_line(browser, app_server, size):
    page = _open(browser, app_server, size, reduced=True)
    try:
        page.wait_for_function(f"() => ({BAR_JS})() !== null", timeout=60_000)
        seen = page.evaluate(BAR_JS)
        controls = seen["controls"]
        names = [c[0] for c in controls]
        for wanted in ("gv-zoom-in", "gv-zoom-out", "gv-fit", "gv-reset", "gv-search"):
            assert wanted in names, seen
        middles = {round(c[1]) for c in controls}
        assert max(middles) - min(middles) <= 2, seen  # one row
        left, right, height = seen["bar"]
        assert all(left - 1 <= c[2] and c[3] <= right + 1 for c in controls), seen
        assert height < 40, seen
        frame = page.frame_locator("iframe.gv-frame").first
        if "gv-colour" not in names:  # moved into the menu: there, and it works
            frame.locator("#gv-more").click()
            frame.locator("#gv-colour").select_option("gradient")
            assert "mean gradient" in frame.locator("#gv-legend").inner_text()
        if PICTURES:
            page.screenshot(path=os.path.join(PICTURES, f"viewer-toolbar-{size[0]}.png"))
    finally:
        page.context.close()


def test_the_step_buttons_are_in_view_with_the_whole_frame(browser, app_server):
    # 1400x900, the page unscrolled: the frame leaves room for the walk-through's row under it
    page = _open(browser, app_server, (1400, 900), reduced=True)
    try:
        button = page.locator(".st-key-step_ahead button").first
        button.wait_for(timeout=60_000)
        page.wait_for_timeout(500)  # the frame fits the window on the next frame
        assert page.evaluate("window.scrollY") == 0
        frame = page.locator("iframe.gv-frame:visible").first.bounding_box()
        box = button.bounding_box()
        assert frame["y"] >= 0 and box["y"] > frame["y"] + frame["height"], (frame, box)
        assert box["y"] + box["height"] <= 900, box  # clicking it needs no scroll
    finally:
        page.context.close()


# The shown frame's document is a new one: the frame was drawn again since `_mark_frames`.
RELOADED_JS = """() => {
  const f = [...document.querySelectorAll('iframe.gv-frame')].find(f => f.offsetParent);
  const doc = f && f.contentDocument;
  return !!(doc && doc.body && doc.body.dataset.gvReady === '1' && !f.contentWindow.__gvOld);
}"""


def _mark_frames(page) -> None:
    page.evaluate(
        """() => document.querySelectorAll('iframe.gv-frame')
          .forEach(f => { f.contentWindow.__gvOld = true; })"""
    )


def test_a_rerun_at_the_same_step_shows_its_end_without_playing_it_again(browser, app_server):
    page = _open(browser, app_server, (1400, 900), reduced=False)
    try:
        _step_ahead(page, 1, "f0")
        assert {edge for edge, _ in _arrived(page, "t3->f0")["seen"]} == {"t3->f0"}
        # an unrelated choice redraws the page, and the viewer's frame, at the same step
        _mark_frames(page)
        page.get_by_text("Show saved tensors", exact=True).click()
        page.wait_for_function(RELOADED_JS, timeout=60_000)
        page.wait_for_timeout(1_000)  # longer than the travel (FLOW_MS)
        state = _arrived(page, "t3->f0")
        assert state["seen"] == [], "the step's gradient travelled again on a rerun"
        assert state["received"] == ["t3"]  # the step's end, as it was
        assert state["grads"] == ["grad [0.3333, 0.3333, 0.3333]"]
        # and a reload of the page's tab (the step kept in its address) neither
        _mark_frames(page)
        page.reload(wait_until="domcontentloaded")
        page.wait_for_function(RELOADED_JS, timeout=90_000)
        page.wait_for_timeout(1_000)
        state = _arrived(page, "t3->f0")
        assert state["seen"] == [] and state["received"] == ["t3"]
        # the next step plays, and so does going back to the step before
        _step_ahead(page, 2, "f1")
        assert {edge for edge, _ in _arrived(page, "t2->f1")["seen"]} == {"t2->f1"}
        page.locator(".st-key-step_back button").first.click()
        page.get_by_text("Walk-through step 1 of 5").first.wait_for(timeout=60_000)
        assert {edge for edge, _ in _arrived(page, "t3->f0")["seen"]} == {"t3->f0"}
        # another program (its step 1 the same as this one's): its first step travels
        _mark_frames(page)
        type_program(page, PRESETS_BY_KEY["lesson"].source.replace("c = b + 3", "c = b + 5"))
        page.get_by_role("button", name="Run program").click()
        page.wait_for_function(RELOADED_JS, timeout=90_000)
        page.get_by_role("button", name="Run backward").click()
        _step_ahead(page, 1, "f0")
        assert {edge for edge, _ in _arrived(page, "t3->f0")["seen"]} == {"t3->f0"}
    finally:
        page.context.close()
