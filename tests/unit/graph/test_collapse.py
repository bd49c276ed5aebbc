"""gradviz.graph.collapse: a graph folded by module (plain GraphModels, no torch), and the
renderer's module_depth and caption."""

from __future__ import annotations

from gradviz.graph.collapse import auto_depth, call_depths, collapse, fold_calls
from gradviz.graph.dot import to_dot
from gradviz.graph.model import DrawOptions, GraphEdge, GraphModel, GraphNode, ModuleCall


def model() -> GraphModel:
    """x -> [net: [net.fc1: w, f1] -> f2] -> out, with fc1's nodes two deep."""
    calls = [
        ModuleCall("m0", "net", "Net", 3),
        ModuleCall("m1", "net.fc1", "Linear", 3, parent="m0"),
    ]
    nodes = [
        GraphNode("x", "tensor", "x", "leaf"),
        GraphNode("w", "tensor", "net.fc1.weight", "leaf", module="m1", device="cuda:0"),
        GraphNode("f1", "function", "AddmmBackward0", "function", module="m1", device="cuda:0"),
        GraphNode("f2", "function", "ReluBackward0", "function", module="m0", device="cuda:0"),
        GraphNode("out", "tensor", "out", "output"),
    ]
    edges = [
        GraphEdge("x", "f1", copy="cpu→cuda:0"),
        GraphEdge("w", "f1"),
        GraphEdge("f1", "f2"),
        GraphEdge("f2", "out"),
    ]
    return GraphModel(nodes=nodes, edges=edges, modules=calls)


def test_depths_count_from_the_outermost_call():
    assert call_depths(model()) == {"m0": 1, "m1": 2}


def test_folding_the_inner_call_keeps_the_outer_cluster():
    folded = collapse(model(), 2)
    node = folded.node("fold_m1")
    assert node.kind == "module" and node.title == "net.fc1: Linear\n(2 nodes)"
    assert node.module == "m0" and node.device == "cuda:0"
    assert [m.id for m in folded.modules] == ["m0"]
    pairs = [(e.src, e.dst, e.copy) for e in folded.edges]
    assert pairs == [("x", "fold_m1", "cpu→cuda:0"), ("fold_m1", "f2", None), ("f2", "out", None)]


def test_folding_the_outer_call_takes_everything_inside_it():
    folded = collapse(model(), 1)
    assert [n.id for n in folded.nodes] == ["x", "out", "fold_m0"]
    assert folded.node("fold_m0").title == "net: Net\n(3 nodes)"
    assert folded.modules == []
    assert [(e.src, e.dst) for e in folded.edges] == [("x", "fold_m0"), ("fold_m0", "out")]


def test_folding_named_calls_matches_folding_by_depth_and_outer_wins():
    assert fold_calls(model(), ["m1"]) == collapse(model(), 2)
    assert fold_calls(model(), ["m0", "m1"]) == collapse(model(), 1)
    m = model()
    assert fold_calls(m, ["m9"]) is m and fold_calls(m, []) is m


def test_a_fold_deeper_than_any_call_changes_nothing():
    m = model()
    assert collapse(m, 3) is m


def test_auto_depth_folds_only_big_graphs_and_as_little_as_needed():
    m = model()
    assert auto_depth(m, over=10, target=4) is None  # 5 nodes: small enough
    assert auto_depth(m, over=3, target=4) == 2  # fc1 folded: 4 nodes
    assert auto_depth(m, over=3, target=3) == 1
    assert auto_depth(GraphModel(nodes=m.nodes), over=3, target=3) is None  # no calls


def test_the_renderer_draws_folded_nodes_module_depth_and_a_caption():
    dot = to_dot(collapse(model(), 2), caption="after backward()")
    assert '"fold_m1" [shape=box3d' in dot and 'label="net.fc1: Linear\\n(2 nodes)"' in dot
    assert "a layer's call, folded into one node (collapse_depth)\"" in dot
    assert dot.rstrip().endswith('label="after backward()" labelloc=t fontsize=12;\n}')
    assert dot.count('subgraph "cluster_m') == 1
    assert "cluster_m" not in to_dot(model(), DrawOptions(module_depth=0))
    assert to_dot(model(), DrawOptions(module_depth=1)).count('subgraph "cluster_m') == 1
    assert to_dot(model()).count('subgraph "cluster_m') == 2


def test_a_cut_edge_outside_the_folded_call_keeps_its_kind_and_label():
    model = GraphModel(
        nodes=[
            GraphNode("a", "tensor", "a", "leaf"),
            GraphNode("f", "function", "MulBackward0", "function", module="m0"),
            GraphNode("b", "tensor", "b", "untracked"),
            GraphNode("g", "function", "AddBackward0", "function"),
        ],
        edges=[
            GraphEdge("a", "f", slots=(0,)),
            GraphEdge("f", "g", slots=(0,)),
            GraphEdge("a", "b", kind="cut", label="detached"),
            GraphEdge("b", "g", kind="input"),
        ],
        modules=[ModuleCall("m0", "net", "Linear", 1)],
    )
    folded = fold_calls(model, ["m0"])
    got = {(e.src, e.dst): (e.kind, e.label, e.slots) for e in folded.edges}
    assert got == {
        ("a", "fold_m0"): ("data", None, ()),  # into the folded call: no function's inputs
        ("fold_m0", "g"): ("data", None, (0,)),
        ("a", "b"): ("cut", "detached", ()),
        ("b", "g"): ("input", None, ()),
    }
