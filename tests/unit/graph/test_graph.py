"""gradviz.graph.build: the lesson's GraphModel, roles, edges and backward steps."""

from __future__ import annotations

import pytest

from gradviz.graph.model import GraphModel
from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.results.trace import RunOptions


@pytest.fixture(scope="module")
def lesson():
    trace = run_program(PRESETS_BY_KEY["lesson"].source, RunOptions(backward="y"))
    assert trace.error is None
    return trace


def titles(model: GraphModel, edges) -> list[tuple[str, str]]:
    return [(model.node(e.src).title, model.node(e.dst).title) for e in edges]


def test_lesson_tensor_nodes_and_roles(lesson):
    model = lesson.graph
    tensors = [n for n in model.nodes if n.kind == "tensor"]
    assert [(n.title, n.role) for n in tensors] == [
        ("x", "leaf"),
        ("a", "intermediate"),
        ("b", "intermediate"),
        ("c", "intermediate"),
        ("y", "output"),
    ]
    for n in tensors:
        assert model.tensor_info(n.tensor).label == n.title


def test_lesson_function_nodes(lesson):
    functions = [n for n in lesson.graph.nodes if n.kind == "function"]
    assert sorted(n.title for n in functions) == sorted(
        ["AddBackward0", "PowBackward0", "AddBackward0", "MeanBackward0"]
    )
    assert all(n.role == "function" for n in functions)
    assert not any("AccumulateGrad" in n.title for n in lesson.graph.nodes)  # folded into x
    pow_node = next(n for n in functions if n.title == "PowBackward0")
    assert "2·a" in pow_node.rule
    assert ("exponent", "2") in pow_node.saved


def test_lesson_edges_follow_the_chain(lesson):
    model = lesson.graph
    x = model.by_title("x").id
    # Walk forward from x: x -> AddBackward0 -> a -> PowBackward0 -> b -> AddBackward0
    # -> c -> MeanBackward0 -> y, every step the only way out.
    out = {}
    for e in model.edges:
        out.setdefault(e.src, []).append(e.dst)
    path = [x]
    while path[-1] in out:
        (nxt,) = out[path[-1]]
        path.append(nxt)
    assert [model.node(n).title for n in path] == [
        "x",
        "AddBackward0",
        "a",
        "PowBackward0",
        "b",
        "AddBackward0",
        "c",
        "MeanBackward0",
        "y",
    ]
    assert len(model.edges) == 8
    assert sorted(titles(model, model.edges)) == sorted(
        [
            ("x", "AddBackward0"),
            ("AddBackward0", "a"),
            ("a", "PowBackward0"),
            ("PowBackward0", "b"),
            ("b", "AddBackward0"),
            ("AddBackward0", "c"),
            ("c", "MeanBackward0"),
            ("MeanBackward0", "y"),
        ]
    )


def test_lesson_backward_steps(lesson):
    steps = lesson.backward[-1].steps
    assert [s.fn.split("::")[-1] for s in steps] == [
        "MeanBackward0",
        "AddBackward0",
        "PowBackward0",
        "AddBackward0",
        "AccumulateGrad",
    ]
    model = lesson.graph
    assert steps[-1].node == model.by_title("x").id
    assert model.node(steps[0].node).title == "MeanBackward0"
    for step in steps[:-1]:
        node = model.node(step.node)
        assert node is not None and node.kind == "function"
        assert node.title == step.fn
    # The gradient that reaches x is the lesson's.
    assert steps[-1].upstream == ["[2.0000, 2.6667, 3.3333]"]


def test_lesson_without_backward_has_no_steps():
    trace = run_program(PRESETS_BY_KEY["lesson"].source, RunOptions())
    assert trace.backward == []
    assert trace.tensor("x").grad is None
    assert len(trace.graph.nodes) == 9


def test_detach_and_no_grad_are_untracked_with_notes():
    trace = run_program(PRESETS_BY_KEY["detach_no_grad"].source, RunOptions(backward="out"))
    assert trace.error is None
    model = trace.graph
    roles = {n.title: n.role for n in model.nodes if n.kind == "tensor"}
    assert roles == {
        "w": "leaf",
        "tracked": "intermediate",
        "frozen": "untracked",
        "scale": "untracked",
        "out": "output",
    }
    assert "detached" in trace.tensor("frozen").note
    assert "no_grad" in trace.tensor("scale").note
    assert trace.tensor("w").note is None
    # Untracked tensors have no autograd edges: no gradient flows through them; dashed
    # edges (gradviz.graph.cuts) show where they were cut off and what they fed.
    untracked = {model.by_title("frozen").id, model.by_title("scale").id}
    data = [e for e in model.edges if e.kind == "data"]
    assert not any(e.src in untracked or e.dst in untracked for e in data)
    cuts = {
        (model.node(e.src).title, model.node(e.dst).title, e.label)
        for e in model.edges
        if e.kind == "cut"
    }
    assert ("w", "frozen", "detached") in cuts
    assert trace.tensor("w").grad == [20.0, 40.0, 60.0]


def test_constant_note():
    trace = run_program("x = torch.ones(3)\ny = x * 2\n", RunOptions())
    assert "requires_grad=False" in trace.tensor("x").note
    assert "none of its inputs" in trace.tensor("y").note
    assert [n.role for n in trace.graph.nodes] == ["untracked", "untracked"]
    assert trace.graph.edges == []


def test_aliases_share_a_node():
    trace = run_program("x = torch.ones(2, requires_grad=True)\ny = x * 2\nz = y\n", RunOptions())
    tensors = [n for n in trace.graph.nodes if n.kind == "tensor"]
    assert [n.title for n in tensors] == ["x", "y = z"]


def test_unnamed_leaf_gets_a_node():
    trace = run_program(
        "y = (torch.ones(2, requires_grad=True) * 3).sum()\n", RunOptions(backward="y")
    )
    assert trace.error is None
    unnamed = [n for n in trace.graph.nodes if n.title == "unnamed leaf"]
    assert len(unnamed) == 1
    assert unnamed[0].shape == [2]
    assert unnamed[0].role == "leaf"


def test_saved_values_freed_after_backward(lesson):
    pow_node = lesson.graph.by_title("PowBackward0")
    assert ("self", "(freed by backward)") in pow_node.saved
    before = run_program(PRESETS_BY_KEY["lesson"].source, RunOptions())
    saved = dict(before.graph.by_title("PowBackward0").saved)
    assert saved["self"].startswith("3 [3.0000, 4.0000, 5.0000]")


def test_held_saved_tensors_before_and_after_backward():
    import torch

    from gradviz.graph.build import held_saved_tensors

    x = torch.randn(3, 4, requires_grad=True)
    loss = _cross_entropy(x)
    nll = loss.grad_fn  # NllLossBackward0: no weight given, its _saved_weight holds none
    assert held_saved_tensors(nll) == {"_saved_self", "_saved_target", "_saved_total_weight"}
    loss.backward()
    assert held_saved_tensors(nll) == frozenset()


def _cross_entropy(x):
    import torch
    import torch.nn.functional as F

    return F.cross_entropy(x, torch.tensor([0, 2, 1]))


SAVED_CASES = [
    PRESETS_BY_KEY["lesson"].source,
    PRESETS_BY_KEY["sgd_loop"].source,
    PRESETS_BY_KEY["tutorial_net"].source,
    # a saved tensor that holds none (no weight given): left out before and after backward
    "x = torch.randn(3, 4, requires_grad=True)\nl = F.cross_entropy(x, torch.tensor([0, 2, 1]))\n"
    "l.backward()\n",
    "x = torch.randn(3, 4, requires_grad=True)\ny = F.layer_norm(x, (4,))\nl = y.sum()\n"
    "l.backward()\n",
    # kept by retain_graph, then freed by the second pass
    "x = torch.randn(3, requires_grad=True)\ny = (x * x).tanh().sum()\n"
    "y.backward(retain_graph=True)\n",
    "x = torch.randn(3, requires_grad=True)\ny = (x * x).tanh().sum()\n"
    "y.backward(retain_graph=True)\ny.backward()\n",
]


def test_saved_values_read_with_what_nodes_held_before_backward_are_as_read_one_by_one(
    monkeypatch,
):
    """The graph's saved values (freed or not) are the same whether build_graph knows what
    each node held before backward (RunRecord.saved_before) or reads every saved tensor."""
    import gradviz.program.recording.backward as recording

    def saved(source):
        trace = run_program(source, RunOptions())
        return [(n.title, n.saved) for n in trace.graph.nodes if n.kind == "function"]

    freed = 0
    for source in SAVED_CASES:
        known = saved(source)
        with monkeypatch.context() as m:
            m.setattr(recording, "held_saved_tensors", lambda fn: frozenset())
            assert saved(source) == known, source
        freed += sum(text == "(freed by backward)" for _, s in known for _, text in s)
        if source.startswith("x = torch.randn(3, 4, requires_grad=True)\nl = F.cross"):
            nll = dict(known)["NllLossBackward0"]
            assert "weight" not in dict(nll) and dict(nll)["self"] == "(freed by backward)"
    assert freed > 10
