"""A gradient's own graph on the drawing (gradviz.graph.higher_order.drawing): the nodes a
create_graph=True backward built sit in an orange cluster named after that call, with a
legend entry, an arrow dy/dx from the tensor backward ran from to the gradient, the same
marks in the interactive viewer's data and torchviz's classic drawing, and one line that
says what the picture shows."""

from __future__ import annotations

import re

from gradviz.graph.dot import to_dot
from gradviz.graph.higher_order import drawing
from gradviz.graph.interactive import viewer_data
from gradviz.graph.model import GraphModel, GraphNode
from gradviz.graph.walkthrough import frames
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.higher_order_programs import BY_HESSIAN, HESSIAN

SECOND = """x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(g,) = torch.autograd.grad(y, x, create_graph=True)
g.backward()
"""
FIRST_ONLY = """x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(g,) = torch.autograd.grad(y, x)
z = x * 2
z.backward()
"""


def _last_call(source: str, classic: bool = False):
    trace = run_program(source, RunOptions(classic=classic))
    assert trace.error is None, trace.error
    return trace, trace.at_call(None)


def _cluster(dot: str) -> str:
    start = dot.index('subgraph "cluster_built_1" {')
    return dot[start : dot.index("\n  }", start)]


def test_the_built_nodes_are_drawn_in_a_cluster_with_a_legend_entry():
    _, call = _last_call(SECOND)
    dot = to_dot(call.graph)
    cluster = _cluster(dot)
    assert "made by backward call 1 (create_graph=True)" in cluster
    built = {n.id for n in call.graph.nodes if n.made_by == 1}
    assert len(built) == 4  # g, MulBackward0, MulBackward1, the second PowBackward0
    for node in call.graph.nodes:
        inside = re.search(rf'^\s*"{node.id}" \[', cluster, re.M) is not None
        assert inside == (node.id in built), node.title
    assert f'"legend_built" [label="{drawing.BUILT_TEXT}"' in dot
    assert "built by backward (2nd order)" in drawing.BUILT_TEXT
    # the first graph and the gradient's graph, joined: y -> g, labelled dy/dx
    names = {call.graph.tensor_info(n.tensor).name: n.id for n in call.graph.nodes if n.tensor}
    edge = re.search(rf'"{names["y"]}" -> "{names["g"]}" \[([^\]]*)\]', dot)
    assert edge is not None and 'label="dy/dx"' in edge.group(1)
    assert "legend_cut" not in dot  # the arrow is not a cut of the graph
    # the second backward's gradient, on the leaf: d2y/dx2 = 6x = 12
    assert "grad 12.0000" in dot


def test_a_graph_without_create_graph_draws_no_marks():
    trace, call = _last_call(FIRST_ONLY)
    for graph in (trace.graph, call.graph):
        dot = to_dot(graph)
        assert "cluster_built" not in dot and "legend_built" not in dot
        assert drawing.summary(graph) is None
        assert all("made_by" not in n for n in viewer_data(graph)["nodes"].values())


def test_the_viewer_and_the_classic_drawing_carry_the_marks():
    trace, call = _last_call(SECOND, classic=True)
    data = viewer_data(call.graph)
    marked = {n["title"] for n in data["nodes"].values() if n.get("made_by") == 1}
    assert marked >= {"MulBackward0", "MulBackward1", "PowBackward0"}
    assert [drawing.BUILT_TEXT, drawing.COLORS["light"][1]] in data["roles"]
    fill = drawing.COLORS["light"][1]
    assert trace.classic_dot.count(f'fillcolor="{fill}"') == 3  # torchviz's function nodes


def test_the_summary_says_what_the_picture_shows():
    _, call = _last_call(SECOND)
    line = drawing.summary(call.graph, call.backward)
    assert "dy/dx has its own graph because create_graph=True" in line
    assert "gives d2y/dx2" in line
    steps = call.backward[0].steps
    where = [drawing.step_graph(s.node, call.graph) for s in steps]
    assert where == ["gradient's graph (made by backward call 1)"] * 3 + ["program's graph"]


def test_the_call_that_built_the_gradient_s_graph_says_what_it_did():
    trace, _ = _last_call(SECOND)
    first = trace.at_call(1)  # autograd.grad's own call: x, y and y's PowBackward0
    assert not drawing.marked(first.graph)
    note = drawing.building_note(first.graph, first.backward)
    assert note is not None and "create_graph=True" in note
    last = trace.at_call(None)
    assert drawing.building_note(last.graph, last.backward) is None  # summary says it there
    plain, _ = _last_call(FIRST_ONLY)
    assert drawing.building_note(plain.graph, plain.backward) is None


def test_the_walk_through_frames_name_the_gradient_s_graph():
    _, call = _last_call(SECOND)
    dots = frames(call.graph, call.backward[0])
    titles = [re.search(r'graph \[label="([^"]*)"', d).group(1) for d in dots]
    made = "(in the gradient's graph, made by backward call 1)"
    assert [made in t for t in titles] == [True, True, True, False, False]
    assert all('subgraph "cluster_built_1"' in d for d in dots)


def test_a_hessian_s_passes_are_drawn_as_a_gradient_s_own_graph_named_after_the_call():
    trace, call = _last_call(HESSIAN, classic=True)
    for graph in (trace.graph, call.graph):
        dot = to_dot(graph)
        start = dot.index('subgraph "cluster_built_f0" {')
        cluster = dot[start : dot.index("\n  }", start)]
        assert f"made by {BY_HESSIAN} (create_graph=True)" in cluster
        built = {n.id for n in graph.nodes if n.made_by == BY_HESSIAN}
        assert len(built) == 11  # H and the ten nodes of its passes and stacking
        for node in graph.nodes:
            inside = re.search(rf'^\s*"{node.id}" \[', cluster, re.M) is not None
            assert inside == (node.id in built), node.title
        assert f'"legend_built" [label="{drawing.BUILT_TEXT}"' in dot
        assert f'tooltip="made by {BY_HESSIAN} (create_graph=True): ' in dot
        assert all(e.kind != "gradient" for e in graph.edges)  # f(x) is not drawn
    data = viewer_data(call.graph)
    assert sum(n.get("made_by") == BY_HESSIAN for n in data["nodes"].values()) == 11
    assert [drawing.BUILT_TEXT, drawing.COLORS["light"][1]] in data["roles"]
    assert trace.classic_dot.count(f"made by {BY_HESSIAN} (create_graph=True)") == 10


def test_the_summary_and_the_walk_through_name_the_hessian_s_passes():
    trace, call = _last_call(HESSIAN)
    line = drawing.summary(trace.graph, trace.backward)
    assert line == (
        "H has its own graph because create_graph=True (the orange nodes, made by "
        f"{BY_HESSIAN}); this backward runs through it and gives the derivative of H."
    )
    where = [drawing.step_graph(s.node, call.graph) for s in call.backward[0].steps]
    assert where[1] == f"gradient's graph (made by {BY_HESSIAN})"
    dots = frames(call.graph, call.backward[0])
    title = re.search(r'graph \[label="([^"]*)"', dots[1]).group(1)
    assert f"(in the gradient's graph, made by {BY_HESSIAN})" in title


def test_backward_calls_and_functional_calls_are_named_together_in_order():
    model = GraphModel(
        nodes=[
            GraphNode("f0", "function", "MulBackward0", "function", made_by=BY_HESSIAN),
            GraphNode("f1", "function", "PowBackward0", "function", made_by=2),
            GraphNode("f2", "function", "PowBackward0", "function"),
        ]
    )
    assert drawing.maker(2) == "backward call 2" and drawing.maker(BY_HESSIAN) == BY_HESSIAN
    assert f"made by backward call 2; {BY_HESSIAN})" in drawing.summary(model)
    dot = to_dot(model)
    assert dot.index('"cluster_built_2"') < dot.index('"cluster_built_f1"')
