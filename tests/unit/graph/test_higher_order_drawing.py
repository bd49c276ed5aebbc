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
from gradviz.graph.walkthrough import frames
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

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
