"""Real browser: the autograd page's code editor (CodeMirror 6 in the page's component,
gradviz.ui.autograd.code_editor): typing and Ctrl+Enter run the program and draw its graph,
a run's error is marked on its line, and a node clicked in the graph highlights its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import EDITOR_TEXT_JS, editor_text, graph_svg, program_editor, type_program

from gradviz.graph.render import dot_available
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.ui.autograd.code_editor import NAME, SCRIPT

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed"),
]

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "editor.png"
SCRIPT_URL = f"/_stcore/bidi-components/{NAME}/{SCRIPT}"
BUNDLE = Path(__file__).resolve().parents[2] / "src/gradviz/ui/autograd/assets" / SCRIPT
PIECE = BUNDLE.read_bytes()[200_000:200_040]  # 40 bytes of the script
PROGRAM = "p = torch.ones(2, requires_grad=True)\nr = p * 3\nq = r.sum()\n"
BROKEN = "a = torch.ones(3, requires_grad=True)\nb = a * 2\nc = nope + b\nd = c.sum()\n"


def _bytes(frame: str | bytes) -> bytes:
    return frame if isinstance(frame, bytes) else frame.encode()


def _idle(page) -> None:
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=120_000)


def _viewer(page):
    frame = page.frame_locator("iframe").first
    frame.locator("body[data-gv-ready='1']").wait_for(timeout=90_000)
    return frame


def test_typing_and_ctrl_enter_run_the_program(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    fetched = []  # the editor's script, by URL
    carried = []  # messages from the server that carry the script
    page.on("response", lambda r: fetched.append(r.status) if r.url.endswith(SCRIPT_URL) else None)
    page.on(
        "websocket", lambda ws: ws.on("framereceived", lambda f: carried.append(PIECE in _bytes(f)))
    )
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        editor = program_editor(page)
        graph_svg(page, "MeanBackward0")  # the lesson
        _idle(page)
        # the plain text area is there for the fallback, hidden while the editor runs
        assert not page.locator("textarea").first.is_visible()
        assert page.locator(".gv-editor .cm-lineNumbers").first.is_visible()
        type_program(page, PROGRAM)
        editor.press("Control+Enter")
        svg = graph_svg(page, "q = ")
        assert "MeanBackward0" not in svg and "MulBackward0" in svg
        _idle(page)
        # the editor's text went where the text area keeps the program
        page.wait_for_function(
            "(want) => document.querySelector('textarea').value === want", arg=PROGRAM
        )
        assert editor_text(page) == PROGRAM
        # the same editor stayed on the page through the reruns (text, undo, cursor kept)
        assert page.evaluate("window.gvEditorBuilds") == 1
        # its script came once, by URL; no message from the server carries it
        assert fetched == [200]
        assert carried and not any(carried)
        # Python is highlighted: the keyword argument's True is a token of its own
        assert page.locator(".gv-editor .cm-line span", has_text="True").count() >= 1
        # a preset puts its program into the editor
        lesson = PRESETS_BY_KEY["lesson"]
        select = page.locator('[data-testid="stSelectbox"]').filter(has_text="Preset")
        option = page.get_by_role("option", name=lesson.title)
        select.locator("input").click()
        option.click()
        page.wait_for_function(f"(want) => ({EDITOR_TEXT_JS})() === want", arg=lesson.source)
        graph_svg(page, "MeanBackward0")
    finally:
        page.close()


def test_an_error_is_marked_on_its_line(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        editor = program_editor(page)
        _idle(page)
        type_program(page, BROKEN)
        page.get_by_role("button", name="Run program").click()  # the editor's own button
        mark = page.locator(".gv-editor .cm-gv-error").first
        mark.wait_for(timeout=90_000)
        assert mark.inner_text() == "nope"  # the name at line 3, column 5
        line = page.locator(".gv-editor .cm-line").filter(has=page.locator(".cm-gv-error"))
        assert line.inner_text() == "c = nope + b"
        assert "nope" in (mark.get_attribute("title") or "")  # the message on hover
        below = page.locator(".gv-editor .cm-gv-error-message")
        assert below.inner_text().startswith("Line 3, column 5: Unknown name")
        markers = page.locator(".gv-editor .cm-gv-error-marker")
        assert markers.count() == 1
        # the marker sits in the gutter beside line 3
        number = page.locator(".gv-editor .cm-lineNumbers .cm-gutterElement", has_text="3")
        assert abs(markers.bounding_box()["y"] - number.first.bounding_box()["y"]) < 4
        page.locator(".gv-editor").first.screenshot(path=str(SCREENSHOT))  # README's picture
        # an edit of that line takes the mark away; the page's own message stays below
        editor.press("Control+End")  # the empty line 5
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowUp")
        page.keyboard.press("End")  # the end of line 3
        page.keyboard.type("  # changed")
        page.locator(".gv-editor .cm-gv-error").wait_for(state="detached", timeout=10_000)
        assert "c = nope + b  # changed" in editor_text(page)
    finally:
        page.close()


def test_a_clicked_graph_node_highlights_its_line_in_the_editor(browser, app_server):
    page = browser.new_page(viewport={"width": 1400, "height": 1300})
    try:
        page.goto(app_server + "/", wait_until="domcontentloaded")
        program_editor(page)
        frame = _viewer(page)
        assert page.locator(".gv-editor .cm-gv-picked").count() == 0
        frame.locator("g.node").filter(has=frame.locator("text >> text=/^b\\b/")).click()
        picked = page.locator(".gv-editor .cm-gv-picked")
        picked.wait_for(timeout=60_000)
        assert picked.inner_text() == "b = a ** 2"
        assert "b" in (picked.get_attribute("title") or "")
        # no second copy of the program below the graph any more
        assert page.get_by_text("Clicked in the graph: b").count() == 0
        # a backward function highlights the line of the tensor it made: MeanBackward0, y
        frame = _viewer(page)
        frame.locator("g.node").filter(has=frame.locator("text >> text=/^MeanBackward0/")).click()
        page.locator(".gv-editor .cm-gv-picked", has_text="y = c.mean()").wait_for(timeout=60_000)
        assert page.locator(".gv-editor .cm-gv-picked").count() == 1
    finally:
        page.close()
