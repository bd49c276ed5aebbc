"""The interactive viewer document (gradviz.graph.interactive): one self-contained HTML file
whose JSON island carries each node's summary; `render -o OUT.html` writes it."""

from __future__ import annotations

import json
import math
import re

import pytest

from gradviz.cli.main import main
from gradviz.graph import interactive, render
from gradviz.graph.model import GraphEdge, GraphModel, GraphNode, ModuleCall, TensorInfo
from gradviz.program.presets import PRESETS_BY_KEY

needs_dot = pytest.mark.skipif(not render.dot_available(), reason="Graphviz `dot` not installed")
SVG = '<?xml version="1.0"?>\n<!DOCTYPE svg>\n<svg viewBox="0 0 10 10"><g class="node"></g></svg>'


def tensor(tid: str, name: str, value, grad=None) -> TensorInfo:
    return TensorInfo(
        id=tid, name=name, label=name, line=1, expr=name, shape=[2], dtype="float32",
        device="cpu", requires_grad=True, is_leaf=True, retains_grad=False, grad_fn=None,
        value=value, preview=str(value), grad=grad, grad_preview=str(grad),
    )  # fmt: skip


def small_model() -> GraphModel:
    return GraphModel(
        nodes=[
            GraphNode("t0", "tensor", "x", "leaf", tensor="t0", module="m0"),
            GraphNode("f0", "function", "SumBackward0", "function", rule="ones", module="m0"),
        ],
        edges=[GraphEdge("t0", "f0")],
        tensors=[tensor("t0", "x</script><script>alert(1)", [3.0, -4.0], [1.0, float("nan")])],
        modules=[ModuleCall("m0", "net", "Linear", 2)],
    )


def island(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="gv-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_summary_gives_min_max_mean_norm_of_finite_numbers():
    s = interactive.summary([[3.0, -4.0], [0.0, float("inf")]])
    assert (s["min"], s["max"], s["count"]) == (-4.0, 3.0, 3)
    assert s["mean"] == pytest.approx(-1 / 3)
    assert s["norm"] == pytest.approx(5.0)
    assert interactive.summary(None) is None
    assert interactive.summary([float("nan")]) is None
    assert interactive.summary(2)["norm"] == 2.0


def test_viewer_data_carries_nodes_edges_modules_and_tensors():
    data = interactive.viewer_data(small_model(), source="x = 1", quiz=True)
    assert set(data["nodes"]) == {"t0", "f0"}
    t = data["nodes"]["t0"]["t"]
    assert t["value"] == [3.0, -4.0] and t["grad"] == [1.0, "nan"]
    assert t["vstats"]["norm"] == pytest.approx(5.0)
    assert t["gstats"]["count"] == 1
    assert data["nodes"]["f0"]["t"] is None and data["nodes"]["f0"]["rule"] == "ones"
    assert data["edges"] == [["t0", "f0"]]
    assert data["modules"] == {"m0": {"label": "net: Linear", "parent": None, "line": 2}}
    assert data["quiz"] is True and data["source"] == "x = 1"
    assert data["remember"] is False  # a file keeps no view; the page asks for it
    assert interactive.viewer_data(small_model(), remember=True)["remember"] is True
    assert data["roles"][0][0].startswith("leaf")
    assert interactive.viewer_data(GraphModel())["roles"] == []  # the classic view: no legend
    assert data["lod_zoom"] == 0  # a small graph always draws its text


def test_only_the_page_s_viewer_asks_the_server_to_fold_layers():
    assert "folds" not in interactive.viewer_data(small_model())  # a file hides in place
    data = interactive.viewer_data(
        small_model(), remember=True, folds={"calls": ["m0"], "depth": 0, "max_depth": 2}
    )
    assert (data["folds"], data["fold_depth"], data["max_depth"]) == (["m0"], "0", 2)
    none = interactive.viewer_data(small_model(), folds={"calls": [], "max_depth": 1})
    assert none["folds"] == [] and none["fold_depth"] == ""


def test_a_big_graph_drops_its_text_when_zoomed_far_out():
    big = GraphModel(
        nodes=[GraphNode(f"f{i}", "function", "AddBackward0", "function") for i in range(301)]
    )
    assert interactive.viewer_data(big)["lod_zoom"] == interactive.LOD_ZOOM > 0


def test_viewer_html_is_one_file_without_network_and_its_island_cannot_break_out():
    page = interactive.viewer_html(small_model(), SVG.encode(), source="x = 1")
    assert page.startswith("<!DOCTYPE html>")
    assert "<?xml" not in page and "<!DOCTYPE svg>" not in page  # the SVG sits inline
    assert "svgPanZoom" in page and "gv-data" in page
    # no external script, stylesheet, image or font: every src/href is local
    assert not re.search(r'(src|href)\s*=\s*["\']?\s*(https?:)?//', page, re.I)
    assert "<link" not in page
    # the program's names cannot end the JSON island's <script> early
    assert page.count("</script>") == 3
    assert island(page)["nodes"]["t0"]["t"]["name"] == "x</script><script>alert(1)"


def test_inline_svg_refuses_what_is_not_svg():
    with pytest.raises(ValueError):
        interactive.inline_svg("<html></html>")
    with pytest.raises(ValueError):
        interactive.asset("../../secret")


@needs_dot
def test_render_html_writes_the_viewer(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADVIZ_SANDBOX", "off")
    prog = tmp_path / "lesson.py"
    prog.write_text(PRESETS_BY_KEY["lesson"].source, encoding="utf-8")
    out = tmp_path / "graph.html"
    assert main(["render", str(prog), "--backward", "y", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    data = island(page)
    x = next(n["t"] for n in data["nodes"].values() if n["t"] and n["t"]["name"] == "x")
    assert x["grad"] == pytest.approx([2.0, 2.6667, 3.3333], abs=1e-4)
    assert math.isclose(x["gstats"]["mean"], 8 / 3, rel_tol=1e-4)
    svg_ids = set(re.findall(r'<g id="node\d+" class="node">\s*<title>([^<]+)</title>', page))
    assert svg_ids == set(data["nodes"])  # every drawn node has its data, no legend boxes
    assert not re.search(r'(src|href)\s*=\s*["\']?\s*(https?:)?//', page, re.I)


def test_the_shape_digest_is_the_graph_s_structure_not_its_values():
    one, two = small_model(), small_model()
    two = two.with_tensors([tensor("t0", "x", [5.0, 6.0], grad=[2.0, 2.0])])
    assert interactive.shape_digest(one) == interactive.shape_digest(two)
    assert interactive.shape_digest(one) != interactive.shape_digest(GraphModel())
    data = interactive.viewer_data(one)
    assert data["shape"] == interactive.shape_digest(one)
    assert data["min_text_px"] == interactive.MIN_TEXT_PX


def test_a_quiz_viewer_s_quiz_toggle_cannot_be_unticked():
    svg = "<svg><g/></svg>"
    quiz = re.search(
        r"<input id=\"gv-quiz-toggle\"[^>]*>",
        interactive.viewer_html(small_model(), svg, quiz=True),
    ).group(0)
    free = re.search(
        r"<input id=\"gv-quiz-toggle\"[^>]*>", interactive.viewer_html(small_model(), svg)
    ).group(0)
    assert "checked" in quiz and "disabled" in quiz
    assert "disabled" not in free and "checked" not in free
    # the script keeps it so, and offers no Reveal of its own in a quiz
    script = interactive.asset("viewer.js")
    assert '$("gv-quiz-toggle").disabled = !!data.quiz' in script
    assert '!$("gv-reveal") && !data.quiz' in script


def test_a_walk_through_step_s_flow_reaches_the_viewer_without_gradients_in_a_quiz():
    flow = [{"src": "t0", "dst": "f0", "to": "t0", "grad": "[1.0, 2.0]"}]
    data = interactive.viewer_data(small_model(), focus="f0", flow=flow)
    assert data["flow"] == flow
    hidden = interactive.viewer_data(small_model(), focus="f0", flow=flow, quiz=True)
    assert hidden["flow"] == [{"src": "t0", "dst": "f0", "to": "t0", "grad": None}]
    assert interactive.viewer_data(small_model())["flow"] == []
