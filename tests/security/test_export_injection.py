"""Program text in the drawings: the SVG export, the interactive viewer's HTML and the
walk-through's frames (its PDF and GIF are drawn from the same DOT) carry the injection
corpus (tests/security/injection.py) as text, never as an element or attribute that loads
or runs anything. Graphviz writes DOT strings into SVG as escaped XML text, so what these
guard is the DOT quoting (mdtext.dot_string), the HTML-like labels (mdtext.html_text) and the
viewer's JSON island."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from gradviz.graph import walkthrough
from gradviz.graph.collapse import fold_calls
from gradviz.graph.dot import to_dot
from gradviz.graph.interactive import viewer_html
from gradviz.graph.model import (
    BackwardRecord,
    BackwardStep,
    DrawOptions,
    GraphEdge,
    GraphModel,
    GraphNode,
    ModuleCall,
    TensorInfo,
)
from gradviz.graph.render import CLI_LIMITS, dot_available, render_bytes
from tests.security.injection import CORPUS, HOST, live_markup

pytestmark = pytest.mark.skipif(not dot_available(), reason="Graphviz `dot` not installed")


def _model(text: str) -> GraphModel:
    """A leaf named `text` (its expression and note too) into a function inside a layer
    reached as `text`, which saved a value named `text`."""
    info = TensorInfo(
        "t1", text, text, 1, text, [2], "float32", "cpu", True, True, False, None,
        [1.0, 2.0], "[1., 2.]", note=text,
    )  # fmt: skip
    return GraphModel(
        nodes=[
            GraphNode("t1", "tensor", text, "leaf", tensor="t1", rule=text),
            GraphNode(
                "f1", "function", "AddBackward0", "function", saved=[(text, text)], module="m0"
            ),
        ],
        edges=[GraphEdge("t1", "f1")],
        tensors=[info],
        modules=[ModuleCall("m0", text, "Linear", 1)],
    )


def _svg(dot: str) -> str:
    return render_bytes(dot, "svg", limits=CLI_LIMITS).decode("utf-8")


@pytest.mark.parametrize("text", CORPUS.values(), ids=CORPUS)
def test_svg_export_shows_program_text_as_text(text):
    model = _model(text)
    for drawn in (
        to_dot(model, DrawOptions(saved=True)),
        to_dot(fold_calls(model, ["m0"])),
        to_dot(model, DrawOptions(rankdir="LR"), show_values=False),
    ):
        svg = _svg(drawn)
        assert not live_markup(svg), live_markup(svg)
        assert HOST in unescape(svg), svg[:2000]  # the text reached the drawing


@pytest.mark.parametrize("text", CORPUS.values(), ids=CORPUS)
def test_viewer_html_carries_program_text_as_data(text):
    model = _model(text)
    page = viewer_html(model, _svg(to_dot(model)), source=text, title=text)
    assert not live_markup(page), live_markup(page)
    island = re.search(r'<script type="application/json" id="gv-data">(.*?)</script>', page, re.S)
    data = json.loads(island.group(1))
    assert data["source"] == text
    assert unescape(re.search(r"<title>(.*?)</title>", page, re.S).group(1)) == text


@pytest.mark.parametrize("text", CORPUS.values(), ids=CORPUS)
def test_walkthrough_frames_show_program_text_as_text(text):
    model = _model(text)
    record = BackwardRecord(
        text, 1, "implicit", "program", steps=[BackwardStep(0, "f1", "AddBackward0", ["1"], ["1"])]
    )
    for frame in walkthrough.frames(model, record):
        svg = _svg(frame)
        assert not live_markup(svg), live_markup(svg)
        assert HOST in unescape(svg)
