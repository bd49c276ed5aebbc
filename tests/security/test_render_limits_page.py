"""The autograd page under the render limits: a refusal is a message, and a failing
layout is not run again on the next rerun (issue items 1 and 4)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradviz.graph import render
from gradviz.ui.autograd.tabs import TAB_KEY

APP = str(Path(__file__).resolve().parents[2] / "app.py")
REAL_RUN = subprocess.run
needs_dot = pytest.mark.skipif(not render.dot_available(), reason="Graphviz `dot` not installed")


@pytest.fixture(autouse=True)
def _server_limits(monkeypatch):
    monkeypatch.delenv("GRADVIZ_PUBLIC", raising=False)
    render.forget_failures()
    yield
    render.forget_failures()


def _app_with(program: str, tab: str = "Export") -> AppTest:
    """The page after running `program`, with `tab` open (the Export tab draws the export;
    tabs beside the graph are made only while open)."""
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.session_state[TAB_KEY] = tab
    at.text_area(key="program").input(program)
    at.button[0].click().run()  # the form's Run program
    assert not at.exception, at.exception
    return at


def _texts(elements) -> str:
    return "\n".join(e.value for e in elements)


@needs_dot
def test_export_tab_shows_the_refusal_instead_of_crashing(monkeypatch):
    tiny = {"svg": 3, "png": 3, "pdf": 3}
    monkeypatch.setattr(render, "SERVER_LIMITS", render.RenderLimits(max_nodes=tiny))
    at = _app_with("w = torch.tensor([1.0, 7.125], requires_grad=True)\nq = (w * 3).sum()\n")
    errors = _texts(at.error)
    assert "too big to draw as SVG" in errors and "Export DOT" in errors
    assert "Drawing it in the browser instead" in _texts(at.warning)
    assert at.get("graphviz_chart")  # the page still shows the graph, laid out by the browser
    at.radio(key="export_fmt").set_value("png").run()
    assert not at.exception
    assert "too big to draw as PNG" in _texts(at.error)
    at.radio(key="export_fmt").set_value("dot").run()
    assert any("Download DOT" in str(b.proto) for b in at.get("download_button"))


@needs_dot
def test_a_slow_layout_is_not_run_again_on_rerun(monkeypatch):
    launches = []

    def slow(cmd, *args, **kwargs):
        if not any(str(part).endswith("dot") for part in cmd):
            return REAL_RUN(cmd, *args, **kwargs)
        launches.append(cmd)
        raise subprocess.TimeoutExpired(cmd, kwargs.get("timeout"))

    monkeypatch.setattr(render.subprocess, "run", slow)
    at = _app_with("w = torch.tensor([2.0, 5.875], requires_grad=True)\nq = (w * w).sum()\n")
    first = len(launches)  # the lesson's and this program's drawings: page and export
    assert first >= 1
    assert "longer than" in _texts(at.error)
    for _ in range(2):
        at.run()
        assert not at.exception
    assert len(launches) == first


@needs_dot
def test_a_big_graph_the_server_refuses_is_not_laid_out_in_the_browser_unasked(monkeypatch):
    """A graph too big for the server used to go to st.graphviz_chart at once: 2,958 nodes
    froze the visitor's tab for minutes. Now the browser lays it out only when asked."""
    from gradviz.ui.autograd import graph_tab

    monkeypatch.setattr(graph_tab, "BROWSER_NODES", 3)
    monkeypatch.setattr(
        render, "SERVER_LIMITS", render.RenderLimits(max_nodes={"svg": 3, "png": 3, "pdf": 3})
    )
    at = _app_with("w = torch.tensor([1.0, 7.125], requires_grad=True)\nq = (w * 3).sum()\n")
    assert "too big to draw as SVG" in _texts(at.warning)
    assert "Drawing it in the browser instead" not in _texts(at.warning)
    assert not at.get("graphviz_chart")
    at.checkbox(key="browser_layout").check().run()
    assert not at.exception
    assert at.get("graphviz_chart")


@needs_dot
def test_a_graph_too_slow_to_lay_out_is_drawn_by_the_browser_with_why(monkeypatch):
    """The same leaf added at each of 60 steps: 139 nodes, and about 10 s of `dot`'s CPU.
    Under the public host's layout-cost limit the server does not start `dot`; the page
    shows the graph laid out by the browser and says why, not an error."""
    launches = []

    def counted(cmd, *args, **kwargs):
        if any(str(part).endswith("dot") for part in cmd) and b"1.01" in kwargs["input"]:
            launches.append(cmd)  # the loop's graph, not the lesson's
        return REAL_RUN(cmd, *args, **kwargs)

    slow = render.RenderLimits(max_long_steps=render.PUBLIC_LIMITS.max_long_steps)
    monkeypatch.setattr(render, "SERVER_LIMITS", slow)
    monkeypatch.setattr(render.subprocess, "run", counted)
    at = _app_with(
        "x = torch.ones(2, requires_grad=True)\nh = x\n"
        "for i in range(60):\n    h = h * 1.01 + x\ny = h.sum()\n",
        tab="Tensors",
    )
    assert "1.01" in at.session_state["shown_dot"]
    at.run()
    assert not at.exception, at.exception
    warned = _texts(at.warning)
    assert "too long to lay out here" in warned and "in the browser instead" in warned
    chart = at.get("graphviz_chart")
    assert chart and "AddBackward0" in chart[0].proto.spec
    assert not at.error
    assert not launches  # `dot` never started on it
