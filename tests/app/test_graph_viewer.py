"""AppTest: the autograd page shows the interactive viewer (gradviz.ui.autograd.graph_viewer) with the
plain picture as its fallback, a toggle for the picture alone, and quiz links."""

import json
import re
from pathlib import Path

import pytest
from editor_told import editor_data
from page_tabs import open_tab
from streamlit.testing.v1 import AppTest

from gradviz.graph.render import dot_available

APP = str(Path(__file__).resolve().parents[2] / "app.py")
pytestmark = pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed")


def _viewer_page(at: AppTest) -> str | None:
    """The viewer document: in the page's component (its data), else in a plain st.iframe."""
    for c in at.get("bidi_component"):
        if c.proto.component_name == "gradviz_viewer":
            return json.loads(c.proto.json)["page"]
    frames = at.get("iframe")
    return frames[0].proto.srcdoc if frames else None


def _viewer_data(at: AppTest) -> dict | None:
    page = _viewer_page(at)
    if page is None:
        return None
    m = re.search(r'<script type="application/json" id="gv-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))


def _picture_shown(at: AppTest) -> bool:
    return any('alt="autograd graph"' in m.value for m in at.markdown)


def test_the_lesson_opens_in_the_viewer_with_its_gradients_and_the_picture_below():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    data = _viewer_data(at)
    assert data is not None and data["quiz"] is False
    x = next(n["t"] for n in data["nodes"].values() if n["t"] and n["t"]["name"] == "x")
    assert x["grad"] is None  # the forward graph first
    next(b for b in at.button if b.label == "Run backward").click().run()
    data = _viewer_data(at)
    x = next(n["t"] for n in data["nodes"].values() if n["t"] and n["t"]["name"] == "x")
    assert x["grad"] == pytest.approx([2.0, 2.6667, 3.3333], abs=1e-4)
    assert "x = torch.arange" in data["source"]
    assert _picture_shown(at)  # the fallback, in its expander


def test_the_toggle_leaves_only_the_plain_picture():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.toggle(key="interactive").set_value(False).run()
    assert not at.exception, at.exception
    assert _viewer_data(at) is None
    assert _picture_shown(at)


def test_a_quiz_link_opens_the_viewer_in_quiz_mode_and_keeps_it():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["quiz"] = "1"
    at.run()
    assert not at.exception, at.exception
    assert _viewer_data(at)["quiz"] is True
    at.run()  # the page rewrites its address on each run: the quiz flag stays in it
    assert _viewer_data(at)["quiz"] is True
    assert at.query_params.get("quiz") in ("1", ["1"])


QUIZ_TOGGLE = re.compile(r'<input id="gv-quiz-toggle"[^>]*>')


def test_a_quiz_link_s_viewer_offers_no_way_to_switch_the_quiz_off_until_the_page_reveals():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["quiz"] = "1"
    at.run()
    toggle = QUIZ_TOGGLE.search(_viewer_page(at)).group(0)
    assert "disabled" in toggle and "checked" in toggle  # ticked, and not the student's to untick
    # the page's own Reveal gradients button is the way to the gradients
    reveal = next(b for b in at.button if b.label == "Reveal gradients")
    reveal.click().run()
    assert not at.exception, at.exception
    assert _viewer_data(at)["quiz"] is False
    assert "disabled" not in QUIZ_TOGGLE.search(_viewer_page(at)).group(0)


def test_the_export_tab_offers_the_viewer_as_one_html_file():
    at = open_tab(AppTest.from_file(APP, default_timeout=120).run(), "Export")
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download interactive HTML" in labels


def test_the_node_clicked_in_the_viewer_is_highlighted_in_the_code_editor():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    assert editor_data(at)["picked"] is None
    # what the viewer's component hands back for a click on tensor b (line 4 of the lesson)
    at.session_state["viewer_selected"] = {
        "id": "t2",
        "title": "b",
        "line": 4,
        "text": "b = a ** 2",
    }
    at.run()
    assert editor_data(at)["picked"] == {"line": 4, "text": "b = a ** 2", "title": "b"}
    # the editor marks the line in place: no second copy of the program
    assert not [c.value for c in at.code if "▶" in c.value]
    assert not any("Clicked in the graph" in c.value for c in at.caption)
    # a click from before an edit that changed that line is forgotten
    at.session_state["viewer_selected"] = {"id": "t2", "title": "b", "line": 4, "text": "b = a"}
    at.run()
    assert editor_data(at)["picked"] is None


def test_with_the_plain_editor_the_clicked_node_marks_its_line_in_a_copy_of_the_program():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.checkbox(key="plain_editor").check().run()
    assert editor_data(at) is None
    at.session_state["viewer_selected"] = {
        "id": "t2",
        "title": "b",
        "line": 4,
        "text": "b = a ** 2",
    }
    at.run()
    assert any("Clicked in the graph: `b`, made on line 4" in c.value for c in at.caption)
    marked = [c.value for c in at.code if "▶" in c.value]
    assert len(marked) == 1
    assert [ln for ln in marked[0].splitlines() if ln.startswith("▶")] == ["▶ 4  b = a ** 2"]
    # a click from before an edit that changed that line is forgotten
    at.session_state["viewer_selected"] = {"id": "t2", "title": "b", "line": 4, "text": "b = a"}
    at.run()
    assert not [c.value for c in at.code if "▶" in c.value]


MLP = (
    "import torch.nn as nn\n"
    "torch.manual_seed(0)\n"
    "net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
    "x = torch.randn(5, 4, requires_grad=True)\n"
    "loss = net(x).pow(2).mean()\n"
)


def test_layers_closed_in_the_viewer_are_drawn_by_the_server_as_one_node_each():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_area(key="program").set_value(MLP)
    next(b for b in at.button if b.label == "Run program").click().run()
    assert not at.exception, at.exception
    data = _viewer_data(at)
    assert data["folds"] == [] and data["max_depth"] == 2
    outer = next(m for m, v in data["modules"].items() if v["parent"] is None)
    shown = at.session_state["viewer_source"]
    # what the component hands back when the visitor closes the outer layer
    at.session_state["viewer_folds"] = {"source": shown, "calls": [outer], "depth": None}
    at.run()
    folded = _viewer_data(at)
    assert folded["folds"] == [outer] and f"fold_{outer}" in folded["nodes"]
    assert len(folded["nodes"]) < len(data["nodes"]) and outer not in folded["modules"]
    # the Layers choice "layers closed" folds every outermost call; "all" opens them
    at.session_state["viewer_folds"] = {"source": shown, "calls": [], "depth": "all"}
    at.run()
    assert _viewer_data(at)["folds"] == [] and len(_viewer_data(at)["nodes"]) == len(data["nodes"])
    # another program's graph starts with every layer open
    at.session_state["viewer_folds"] = {"source": "another", "calls": [outer], "depth": None}
    at.run()
    assert _viewer_data(at)["folds"] == []


def test_the_exported_viewer_is_drawn_in_the_theme_of_its_graph(monkeypatch):
    """On a dark page (theme 'follow page') the Export tab's HTML viewer gets the dark theme
    its drawing was made in, not the unresolved 'auto' (which the viewer reads as light)."""
    from gradviz.ui.autograd import graph_viewer

    themes = []
    real = graph_viewer._page

    def page(trace, svg, options, *, remember, focus=None):
        if not remember:  # the exported file, not the page's own viewer
            themes.append(options.theme)
        return real(trace, svg, options, remember=remember, focus=focus)

    monkeypatch.setattr(graph_viewer, "_page", page)
    at = AppTest.from_file(APP, default_timeout=120)
    at.context = {"theme": "dark"}
    at.run()
    assert not at.exception, at.exception
    open_tab(at, "Export")
    assert themes and set(themes) == {"dark"}, themes


def test_the_landing_page_asks_the_browser_for_the_viewers_scripts_early():
    """The sidebar's script (the page's first element) names Streamlit's component scripts
    for modulepreload (gradviz.ui.preload), so they are not fetched behind the editor's."""
    from gradviz.ui.preload import component_scripts

    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    scripts = [h.proto.body for h in at.get("html")]
    assert component_scripts() and any(
        "modulepreload" in body and f"./{component_scripts()[0]}" in body for body in scripts
    )
    assert _viewer_data(at) is not None
