"""Real browser: the interactive viewer (`render -o OUT.html`) opened from disk with every
network request blocked: zoom, hover, click to inspect, search, collapse, colour by, the quiz;
and the autograd page's viewer frame."""

from __future__ import annotations

import re

import pytest
from e2e_support import MLP

from gradviz.cli.main import main
from gradviz.graph.render import dot_available
from gradviz.program.presets import PRESETS_BY_KEY

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]

HOSTILE = (
    "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    'y = (x * len("<img src=q onerror=document.title=1></script><b id=pwn>")).sum()\n'
)


# The page opens on the forward graph: Run backward, then wait for the viewer to carry x's gradient.
BACKWARD_DRAWN_JS = """() => [...document.querySelectorAll('iframe')].some(f => {
  const m = f.srcdoc && f.srcdoc.match(/id="gv-data">([\\s\\S]*?)<\\/script>/);
  if (!m) return false;
  const d = JSON.parse(m[1]);
  return Object.values(d.nodes).some(n => n.t && n.t.name === 'x' && n.t.grad);
})"""


def _run_backward(page) -> None:
    page.get_by_role("button", name="Run backward").click()
    page.wait_for_function(BACKWARD_DRAWN_JS, timeout=90_000)


def _export(tmp_path, monkeypatch, name: str, source: str, backward: str) -> str:
    monkeypatch.setenv("GRADVIZ_SANDBOX", "off")
    prog = tmp_path / f"{name}.py"
    prog.write_text(source, encoding="utf-8")
    out = tmp_path / f"{name}.html"
    assert main(["render", str(prog), "--backward", backward, "-o", str(out)]) == 0
    return out.as_uri()


def _open(browser, url: str):
    """The page with every request but the file itself refused; (page, refused, errors)."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    refused: list[str] = []
    errors: list[str] = []

    def route(r):
        if r.request.url == url:
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("body[data-gv-ready='1']", timeout=15_000)
    return page, refused, errors


def _node(page, title: str):
    """The drawn node of the tensor or function whose first label line starts with `title`."""
    return page.locator("g.node").filter(has=page.locator(f"text >> text=/^{re.escape(title)}\\b/"))


def _transform(page) -> str:
    return page.locator("g.svg-pan-zoom_viewport").get_attribute("transform")


SCALE_JS = (
    "() => document.querySelector('g.svg-pan-zoom_viewport').transform.baseVal"
    ".consolidate().matrix.a"
)


def _matrix(transform: str) -> list[float]:
    return [float(v) for v in re.findall(r"[-0-9.e]+", transform)]


@pytest.fixture
def lesson(tmp_path, monkeypatch):
    return _export(tmp_path, monkeypatch, "lesson", PRESETS_BY_KEY["lesson"].source, "y")


def test_exported_viewer_works_from_disk_with_the_network_blocked(browser, lesson):
    page, refused, errors = _open(browser, lesson)
    try:
        assert page.locator("g.node").count() == 9
        assert refused == [] and errors == []
        assert "leaf (requires grad)" in page.inner_text("#gv-legend")
    finally:
        page.context.close()


def test_wheel_and_buttons_zoom_and_fit_returns(browser, lesson):
    page, _, _ = _open(browser, lesson)
    try:
        first = _transform(page)
        box = page.locator("#gv-graph").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, -400)
        page.wait_for_function("(t) => document.querySelector('g.svg-pan-zoom_viewport')"
                               ".getAttribute('transform') !== t", arg=first)  # fmt: skip
        assert _matrix(_transform(page))[0] > _matrix(first)[0]  # zoomed in
        # svg-pan-zoom writes the transform at the next animation frame: wait for it
        scale = _matrix(first)[0]
        page.click("#gv-fit")
        page.wait_for_function(f"() => Math.abs(({SCALE_JS})() - {scale}) < 1e-3")
        assert _matrix(_transform(page)) == pytest.approx(_matrix(first), abs=1e-3)
        page.click("#gv-zoom-out")
        page.wait_for_function(f"() => ({SCALE_JS})() < {scale} - 1e-3")
        for _ in range(8):  # far out: a small graph keeps its text (big ones drop it)
            page.click("#gv-zoom-out")
        page.wait_for_function(f"() => ({SCALE_JS})() < {scale} / 4")
        assert "gv-lod" not in (page.get_attribute("body", "class") or "")
        assert _node(page, "x").locator("text").first.is_visible()
    finally:
        page.context.close()


def test_a_two_finger_pinch_zooms(browser, lesson):
    context = browser.new_context(viewport={"width": 1300, "height": 900}, has_touch=True)
    try:
        page = context.new_page()
        page.goto(lesson)
        page.wait_for_selector("body[data-gv-ready='1']", timeout=15_000)
        first = _matrix(_transform(page))[0]
        box = page.locator("#gv-graph").bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        cdp = context.new_cdp_session(page)

        def touch(kind: str, gap: float) -> None:
            points = [{"x": cx - gap, "y": cy}, {"x": cx + gap, "y": cy}] if gap else []
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

        touch("touchStart", 40)
        for gap in (60, 80, 100, 120):  # fingers apart: zoom in, three times as far
            touch("touchMove", gap)
        touch("touchEnd", 0)
        page.wait_for_function(f"() => Math.abs(({SCALE_JS})() / {first} - 3) < 0.15")
        assert _matrix(_transform(page))[0] == pytest.approx(3 * first, rel=0.05)
    finally:
        context.close()


def test_hover_shows_the_gradient_and_click_inspects_the_tensor(browser, lesson):
    page, _, _ = _open(browser, lesson)
    try:
        x = _node(page, "x")
        x.hover()
        tip = page.locator("#gv-tip")
        tip.wait_for(state="visible")
        assert "grad: min 2 · max 3.3333 · mean 2.6667" in tip.inner_text()
        assert "float32" in tip.inner_text() and "line 2" in tip.inner_text()
        x.click()
        inspector = page.locator("#gv-inspector")
        inspector.wait_for(state="visible")
        cells = inspector.locator("table.gv-heat").nth(1).locator("td").all_inner_texts()
        assert cells == ["2", "2.6667", "3.3333"]  # the whole gradient
        assert inspector.locator(".gv-line-hl").inner_text().startswith("  2  x = torch.arange")
        # the path from x to the output y: all 9 nodes of the chain, and its 8 edges
        assert page.locator("g.node.gv-on-path").count() == 9
        assert page.locator("g.edge.gv-on-path").count() == 8
        _node(page, "c").click()  # from c: c, MeanBackward0, y
        assert page.locator("g.node.gv-on-path").count() == 3
        assert page.locator("g.node.gv-dim").count() == 6
    finally:
        page.context.close()


def test_search_finds_a_tensor_and_colour_by_gradient_has_a_legend(browser, lesson):
    page, _, _ = _open(browser, lesson)
    try:
        page.fill("#gv-search", "b")
        assert page.locator("g.node.gv-match").count() >= 1
        assert "found" in page.inner_text("#gv-search-count")
        fill = _node(page, "x").locator("path").first.get_attribute("fill")
        page.select_option("#gv-colour", "gradient")
        assert _node(page, "x").locator("path").first.get_attribute("fill") != fill
        assert "mean gradient" in page.inner_text("#gv-legend")
        page.select_option("#gv-colour", "device")
        assert "cpu" in page.inner_text("#gv-legend")
    finally:
        page.context.close()


def test_clicking_a_layer_cluster_closes_and_opens_it(browser, tmp_path, monkeypatch):
    page, refused, _ = _open(browser, _export(tmp_path, monkeypatch, "mlp", MLP, "loss"))
    try:
        visible = "() => [...document.querySelectorAll('g.node')].filter(g => g.style.display !== 'none').length"
        before = page.evaluate(visible)
        cluster = page.locator("g.cluster").filter(has=page.locator("title", has_text="cluster_m"))
        assert cluster.count() >= 1
        outer = cluster.first
        outer.locator("text").first.click()
        after = page.evaluate(visible)
        assert after < before
        assert "nodes hidden" in outer.locator("text").first.text_content()
        outer.locator("text").first.click()
        assert page.evaluate(visible) == before
        page.select_option("#gv-depth", "0")
        assert page.evaluate(visible) == after
        assert refused == []
    finally:
        page.context.close()


def test_quiz_marks_a_wrong_and_a_right_gradient_then_reveals(browser, lesson):
    page, _, _ = _open(browser, lesson)
    try:
        page.check("#gv-quiz-toggle")
        x = _node(page, "x")
        assert "grad ?" in x.text_content() and "3.3333" not in x.text_content()
        x.hover()
        assert "hidden (quiz)" in page.inner_text("#gv-tip")
        x.click()
        page.fill("#gv-answer", "2, 2, 2")
        page.click("#gv-check")
        assert page.locator("#gv-verdict.gv-wrong").is_visible()
        page.fill("#gv-answer", "[2, 2.667, 3.333]")
        page.click("#gv-check")
        assert page.inner_text("#gv-verdict") == "Right!"
        assert "3.3333" in x.text_content()  # revealed on the graph
    finally:
        page.context.close()


def test_quiz_link_opens_in_quiz_mode(browser, lesson):
    page, _, _ = _open(browser, lesson + "?quiz=1")
    try:
        assert page.is_checked("#gv-quiz-toggle")
        assert "grad ?" in _node(page, "x").text_content()
    finally:
        page.context.close()


def test_a_hostile_string_in_the_program_stays_text(browser, tmp_path, monkeypatch):
    page, refused, errors = _open(browser, _export(tmp_path, monkeypatch, "h", HOSTILE, "y"))
    try:
        y = _node(page, "y")
        y.hover()
        assert "<img src=q" in page.inner_text("#gv-tip")  # shown as text
        y.click()
        page.wait_for_timeout(300)
        assert page.locator("#pwn").count() == 0 and page.locator("#gv-tip img").count() == 0
        assert page.title() != "1" and errors == [] and refused == []
    finally:
        page.context.close()


def test_the_autograd_page_shows_the_viewer_and_its_inspector(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1300})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        _run_backward(page)
        frame = page.frame_locator("iframe").first
        frame.locator("body[data-gv-ready='1']").wait_for(timeout=90_000)
        x = frame.locator("g.node").filter(has=frame.locator("text >> text=/^x\\b/"))
        x.hover()
        assert "mean 2.6667" in frame.locator("#gv-tip").inner_text()
        x.click()
        assert "3.3333" in frame.locator("#gv-inspector").inner_text()
        inner = page.locator("iframe").first.element_handle().content_frame()
        before = inner.evaluate(SCALE_JS)
        for _ in range(3):
            frame.locator("#gv-zoom-in").click()
        inner.wait_for_function(f"() => ({SCALE_JS})() > {before} * 1.9")
        frame.locator("#gv-colour").select_option("gradient")
        viewport = frame.locator("g.svg-pan-zoom_viewport")
        zoomed = _matrix(viewport.get_attribute("transform"))
        # a rerun that draws the graph again (another theme) keeps the view
        page.get_by_text("dark", exact=True).click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('iframe')].some(f => f.srcdoc"
            " && f.srcdoc.includes('#1e1e1e'))",
            timeout=90_000,
        )
        frame = page.frame_locator("iframe").first
        frame.locator("body[data-gv-ready='1']").wait_for(timeout=90_000)
        again = _matrix(frame.locator("g.svg-pan-zoom_viewport").get_attribute("transform"))
        assert again == pytest.approx(zoomed, abs=0.5)
        assert frame.locator("#gv-colour").input_value() == "gradient"
    finally:
        page.close()


def test_the_landing_page_preloads_the_viewers_scripts_once(browser, app_server):
    """The sidebar's script asks for Streamlit's component scripts (gradviz.ui.preload): each
    has a modulepreload link to the address the frontend imports it from (the script's own,
    or on a warm server the frontend's, when it asked first), and is fetched once, with 200."""
    from gradviz.ui.preload import component_scripts

    names = component_scripts()
    assert names
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    fetched: dict[str, list[int]] = {}
    page.on(
        "response",
        lambda r: fetched.setdefault(r.url.rsplit("/", 1)[-1], []).append(r.status),
    )
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        page.frame_locator("iframe").first.locator("body[data-gv-ready='1']").wait_for(
            timeout=90_000
        )
        page.wait_for_function(  # the script has run (it may come after the drawing)
            "n => document.documentElement.dataset.gvPreloaded === String(n)",
            arg=len(names),
            timeout=30_000,
        )
        links = page.eval_on_selector_all('link[rel="modulepreload"]', "ls => ls.map(l => l.href)")
        for name in names:
            assert f"{app_server}/static/js/{name}" in links, name
            # once: the frontend's import and the preload met the same file
            assert fetched.get(name) == [200], (name, fetched.get(name))
    finally:
        page.close()


def test_the_export_tab_downloads_a_viewer_that_works_offline(browser, app_server, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1300}, accept_downloads=True)
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        _run_backward(page)
        page.get_by_role("tab", name="Export").click()
        button = page.get_by_role("button", name="Download interactive HTML")
        button.wait_for(timeout=90_000)
        with page.expect_download(timeout=30_000) as info:
            button.click()
        target = tmp_path / "graph.html"
        info.value.save_as(target)
    finally:
        page.close()
    viewer, refused, errors = _open(browser, target.as_uri())
    try:
        assert viewer.locator("g.node").count() == 9
        _node(viewer, "x").hover()
        assert "mean 2.6667" in viewer.inner_text("#gv-tip")
        assert refused == [] and errors == []
    finally:
        viewer.context.close()
