"""Where a program cut the graph (detach(), torch.no_grad()) and the inputs that do not
require grad: edges of kind "cut" and "input", drawn dashed and labelled."""

from __future__ import annotations

import re
import shutil
import subprocess

from gradviz.graph import render
from gradviz.graph.dot import EDGE_XLABEL_NODES, restyle_classic, to_dot
from gradviz.graph.model import DrawOptions, GraphModel
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.limits import Limits
from gradviz.program.results.trace import RunOptions

BIG = Limits(max_lines=5_000, max_statements=10_000)

CUTS = """\
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.exp(x)
z = y.detach()
with torch.no_grad():
    w = y * 2
W = torch.ones(3, 2, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
inp = torch.tensor([0.5, -1.0])
q = F.linear(inp, W, b)
"""


def _edge(model: GraphModel, src: str, dst_title: str | None = None):
    s = model.by_title(src)
    assert s is not None, src
    found = [e for e in model.edges if e.src == s.id]
    if dst_title is not None:
        found = [e for e in found if model.node(e.dst).title == dst_title]
    assert found, f"no edge out of {src}"
    return found[0]


def test_detach_and_no_grad_results_hang_off_their_source_by_a_cut_edge():
    trace = run_program(CUTS)
    assert trace.error is None, trace.error
    model = trace.graph
    detached = _edge(model, "y", "z")
    assert (detached.kind, detached.label) == ("cut", "detached")
    no_grad = _edge(model, "y", "w")
    assert (no_grad.kind, no_grad.label) == ("cut", "no_grad")


def test_an_input_that_does_not_require_grad_feeds_the_function_that_used_it():
    model = run_program(CUTS).graph
    e = _edge(model, "inp")
    assert e.kind == "input"
    assert model.node(e.dst).kind == "function"
    assert model.node(e.dst).title in ("AddmmBackward0", "MmBackward0", "SqueezeBackward4")


def test_cut_and_input_edges_are_drawn_dashed_with_labels_and_explained():
    model = run_program(CUTS).graph
    dot = to_dot(model)
    z = model.by_title("z").id
    y = model.by_title("y").id
    line = next(ln for ln in dot.splitlines() if f'"{y}" -> "{z}"' in ln)
    assert "style=dashed" in line and 'label="detached"' in line
    inp = model.by_title("inp").id
    line = next(ln for ln in dot.splitlines() if ln.strip().startswith(f'"{inp}" ->'))
    assert "style=dashed" in line
    assert "dashed arrow" in dot  # the legend says what a dashed arrow is


def test_ordinary_edges_stay_solid_data_edges():
    model = run_program("x = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\n").graph
    assert {e.kind for e in model.edges} == {"data"}
    assert "style=dashed" not in to_dot(model, DrawOptions(legend=False))


def test_the_classic_view_is_torchviz_own_without_cut_edges():
    trace = run_program(CUTS)
    assert trace.classic_dot is not None
    assert "detached" not in trace.classic_dot and "dashed" not in trace.classic_dot
    classic = restyle_classic(trace.classic_dot)
    assert "AddmmBackward0" in classic or "MmBackward0" in classic


def test_a_cut_inside_a_function_reads_the_functions_own_names():
    trace = run_program(
        "def frozen(t):\n"
        "    f = t.detach()\n"
        "    return f\n"
        "a = torch.ones(2, requires_grad=True)\n"
        "b = a * 3\n"
        "c = frozen(b)\n"
    )
    assert trace.error is None, trace.error
    model = trace.graph
    cuts = [e for e in model.edges if e.kind == "cut"]
    assert len(cuts) == 1 and cuts[0].label == "detached"
    assert model.node(cuts[0].src).title in ("b = t", "t = b", "b")


def test_read_tensors_keeps_what_the_graph_leaves_out():
    import ast

    import torch

    from gradviz.program.recording.sources import read_tensors
    from gradviz.program.recording.state import RunState
    from gradviz.program.results.trace import RunOptions

    state = RunState("", RunOptions())
    w = torch.ones(2, requires_grad=True)
    x = torch.ones(2)
    state.scope.names.update(w=w, x=x, n=3)
    node = ast.parse("w * x + n", mode="eval").body
    result = w * x
    ((tensor, fn),) = read_tensors(state, node, result, cut=False)
    assert tensor is x and fn is result.grad_fn  # MulBackward0 saved x
    assert read_tensors(state, node, result.detach(), cut=True) == ((w, None),)
    assert read_tensors(state, node, x * 2, cut=False) == ()  # no grad_fn: nothing to feed


def test_an_input_finds_its_function_even_after_backward_freed_what_it_saved():
    trace = run_program(
        "W = torch.ones(3, 2, requires_grad=True)\n"
        "x = torch.ones(2)\n"
        "loss = (F.linear(x, W) ** 2).mean()\n"
        "loss.backward()\n"
    )
    model = trace.graph
    (e,) = [e for e in model.edges if e.kind == "input"]
    assert model.node(e.src).title == "x"
    assert model.node(e.dst).title in ("MmBackward0", "SqueezeBackward4", "MvBackward0")
    assert model.node(e.dst).title != "MeanBackward0"


def test_big_drawings_label_edges_with_xlabel_so_dot_keeps_one_rank_a_step():
    """dot doubles every rank of a graph with any `label`ed edge; over EDGE_XLABEL_NODES
    nodes the cut and input edges carry `xlabel`s instead, and the layout gets no longer."""
    small = to_dot(run_program(CUTS).graph)
    assert ' label="detached"' in small and "xlabel=" not in small
    steps = EDGE_XLABEL_NODES // 3 + 5
    lines = ["h = torch.ones(2)"]
    for i in range(steps):
        lines += [f"w{i} = torch.full((2,), 0.5, requires_grad=True)", f"h = torch.tanh(h * w{i})"]
    trace = run_program("\n".join(lines) + "\n", RunOptions(limits=BIG))
    assert trace.error is None, trace.error
    assert len(trace.graph.nodes) > EDGE_XLABEL_NODES
    big = to_dot(trace.graph)
    assert ' xlabel="input (no grad)"' in big and ' label="input (no grad)"' not in big
    if render.dot_available():
        assert max_rank(big) * 1.5 < max_rank(big.replace(" xlabel=", " label="))


def max_rank(dot: str) -> int:
    """The number of ranks dot lays `dot` out in (its verbose report)."""
    exe = shutil.which("dot")
    proc = subprocess.run([exe, "-v", "-Tplain"], input=dot.encode(), capture_output=True)
    return int(re.search(rb"Maxrank = (\d+)", proc.stderr).group(1))


def test_accumulates_answers_per_type_of_torch_node_and_asks_python_nodes_each_time():
    import torch

    from gradviz.graph.cuts import users_of
    from gradviz.graph.record import accumulates

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    w = torch.ones(3, requires_grad=True)
    x = torch.ones(3)
    y = (w * x).sum()
    mul = y.grad_fn.next_functions[0][0]
    acc = mul.next_functions[0][0]
    assert accumulates(acc) and accumulates(acc)
    assert not accumulates(y.grad_fn) and not accumulates(y.grad_fn)  # SumBackward0
    assert users_of([x], y) == [mul]  # MulBackward0 saved x; the search passed the leaf by
    node = Double.apply(w).grad_fn
    assert not accumulates(node)
    node.variable = w  # a node of Python's own: its attributes are its own
    assert accumulates(node)
