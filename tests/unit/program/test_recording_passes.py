"""gradviz.program.recording across the passes of a loop: a node hooked in one pass keeps
its hook (a parameter's AccumulateGrad, a retained graph), only the new nodes of a pass are
hooked, and only the first passes note the saved tensors their nodes hold; the last pass's
steps, the accumulated-gradient notes and the drawn saved values are what recording every
node of every pass gives."""

from __future__ import annotations

import torch

import gradviz.program.recording.backward as recording
from gradviz.graph.record import walk_graph
from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions


def run(source: str, **options):
    trace = run_program(source, RunOptions(classic=False, **options))
    assert trace.error is None, trace.error
    return trace


def names(record) -> list[str]:
    return [s.fn.split("::")[-1] for s in record.steps]


def plain_names(loss: torch.Tensor) -> list[str]:
    """The nodes autograd runs for `loss`, in order, as PyTorch's own hooks see them."""
    ran: list[str] = []
    for fn in walk_graph(loss.grad_fn):
        fn.register_hook(lambda gi, go, fn=fn: ran.append(type(fn).__name__))
    loss.backward()
    return ran


# A loop over a generator (no quiet passes): every pass is recorded. The last pass runs
# under `if` with nodes of kinds no earlier pass made (tanh, exp), and a parameter `v` no
# earlier pass reached; `w`'s AccumulateGrad was hooked in the first pass.
UNDER_IF = """\
import torch
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
v = torch.tensor([1.5, 0.25, -0.5], requires_grad=True)
def batches(n):
    for i in range(n):
        yield torch.tensor([1.0, 2.0, 3.0]) * (i + 1)
for i, x in enumerate(batches(6)):
    loss = (w * x).sum()
    if i == 5:
        loss = (w * x).tanh().sum() + (v * x).exp().mean()
    loss.backward()
"""


def test_a_last_pass_with_new_nodes_has_every_node_s_step_in_autograd_s_order():
    trace = run(UNDER_IF)
    last = trace.backward[-1]
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    v = torch.tensor([1.5, 0.25, -0.5], requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0]) * 6
    assert names(last) == plain_names((w * x).tanh().sum() + (v * x).exp().mean())
    assert names(last).count("AccumulateGrad") == 2
    # w's .grad held the five passes before; v's held none
    assert last.accumulated == ["w"]
    assert [r.accumulated for r in trace.backward] == [[]] + [["w"]] * 5


def test_a_parameter_replaced_between_passes_is_hooked_and_named():
    source = """\
import torch
def batches(n):
    for i in range(n):
        yield torch.ones(2) * (i + 1)
w = torch.ones(2, requires_grad=True)
for i, x in enumerate(batches(5)):
    if i == 3:
        w = torch.full((2,), 2.0, requires_grad=True)
    loss = (w * x).sum()
    loss.backward()
"""
    trace = run(source)
    records = trace.backward
    assert [r.accumulated for r in records] == [[], ["w"], ["w"], [], ["w"]]
    last = records[-1]
    assert names(last) == ["SumBackward0", "MulBackward0", "AccumulateGrad"]
    assert last.steps[2].upstream == ["[5.0000, 5.0000]"]  # the new w's gradient: x
    # the step's node is the new w, the one the graph draws
    drawn = trace.graph.node(last.steps[2].node)
    assert drawn.kind == "tensor" and drawn.title == "w[3]", drawn


def test_a_retained_graph_s_second_pass_in_a_loop_has_every_step():
    source = """\
import torch
w = torch.ones(2, requires_grad=True)
def batches(n):
    for i in range(n):
        yield torch.ones(2) * (i + 1)
for x in batches(3):
    loss = (w * x).pow(2).sum()
    loss.backward(retain_graph=True)
    loss.backward()
"""
    trace = run(source)
    first, second = trace.backward[-2:]
    assert first.steps == []
    assert names(second) == ["SumBackward0", "PowBackward0", "MulBackward0", "AccumulateGrad"]
    assert second.steps[3].upstream == ["[18.0000, 18.0000]"]  # 2 * (3w) * 3 at w = 1
    assert second.accumulated == ["w"]


LOOP = """\
import torch
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
def batches(n):
    for i in range(n):
        yield torch.tensor([1.0, 2.0, 3.0]) * (i + 1)
for x in batches(9):
    y = (w * x).tanh()
    loss = (y * y).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
        w.grad.zero_()
"""


def _saved(trace) -> list:
    graphs = [trace.graph, *(c.graph for c in trace.calls.kept)]
    return [[(n.title, n.saved) for n in g.nodes if n.kind == "function"] for g in graphs]


def test_only_the_first_passes_note_their_saved_tensors(monkeypatch):
    noted: list[str] = []
    held = recording.held_saved_tensors

    def counting(fn):
        noted.append(type(fn).__name__)
        return held(fn)

    monkeypatch.setattr(recording, "held_saved_tensors", counting)
    trace = run(LOOP)
    assert len(trace.backward) == 9
    per_pass = ["SumBackward0", "MulBackward0", "TanhBackward0", "MulBackward0"]
    # w's AccumulateGrad once (hooked in the first pass, kept), then each pass's new nodes
    expected = ["AccumulateGrad"] + per_pass * recording.SAVED_BEFORE_PASSES
    assert sorted(noted) == sorted(expected)


def test_saved_values_of_passes_past_the_first_are_drawn_as_when_every_pass_notes_them(
    monkeypatch,
):
    few = _saved(run(LOOP))
    monkeypatch.setattr(recording, "SAVED_BEFORE_PASSES", 1_000)
    every = _saved(run(LOOP))
    assert few == every
    freed = [text for graph in few for _, saved in graph for _, text in saved]
    assert freed.count("(freed by backward)") > 10


def test_a_name_rebound_each_pass_keeps_bound_now_right():
    """A loop's binding replaces the one before it in its slot: the same tensor as it was
    (`for p in params`) changes nothing, another tensor is bound now and the one it replaced
    is not, unless another binding holds it."""
    from gradviz.graph.record import Binding
    from gradviz.program.recording.state import NAMED_LOOP_PASSES, RunState

    state = RunState("", RunOptions())
    kept = [torch.zeros(1) for _ in range(NAMED_LOOP_PASSES)]
    latest, same, other = torch.ones(1), torch.ones(2), torch.ones(3)

    def bind(t, i):
        state.add_binding(Binding("x", t, 5, "x", False, "Name", step=(i,)))

    for i, t in enumerate([*kept, latest, same, same, same]):
        bind(t, i)
    assert len(state.bindings) == NAMED_LOOP_PASSES + 1
    assert all(state.bound_now(t) for t in [*kept, same]) and not state.bound_now(latest)
    bind(other, 99)
    assert state.bound_now(other) and not state.bound_now(same)
    assert state.name_of(other) == "x" and state.name_of(same) is None
    same.add_(1)  # a new version: bound again, it is another value
    bind(same, 100)
    bind(same, 101)
    assert state.bound_now(same) and not state.bound_now(other)
    bind(kept[0], 102)  # a tensor another binding holds stays bound when replaced
    bind(other, 103)
    assert state.bound_now(kept[0]) and state.bound_now(other) and not state.bound_now(same)


def test_name_of_answers_as_the_latest_binding_holding_the_tensor_after_each_change():
    """name_of keeps the names it found; each binding added or replaced that holds the
    tensor, or held it, gives the answer a search of the bindings gives."""
    from gradviz.graph.record import Binding
    from gradviz.program.recording.state import NAMED_LOOP_PASSES, RunState

    state = RunState("", RunOptions())
    w, v, t = torch.ones(1), torch.ones(2), torch.ones(3)

    def searched(tensor):
        return next((b.name for b in reversed(state.bindings) if b.tensor is tensor), None)

    def bind(name, tensor, line, step=()):
        state.add_binding(Binding(name, tensor, line, name, False, "Name", step=step))
        for x in (w, v, t):
            assert state.name_of(x) == searched(x), (name, line, step)
            assert state.name_of(x) == searched(x)  # asked again: as kept

    bind("w", w, 1)
    bind("params", w, 2)  # the same tensor named again: the latest name
    for i in range(NAMED_LOOP_PASSES + 3):  # a loop's slot, then its replacements
        bind("p", [w, v][i % 2], 4, (i,))
    bind("t", t, 6)
    bind("p", t, 4, (99,))  # the slot held v: v's name is now that of an earlier pass's
    assert state.name_of(v) == "p" and state.name_of(t) == "t"  # "t" is later in the list
    bind("v", v, 7)
    assert state.name_of(v) == "v"
    # a loop's latest tensor, named only in its slot, is named no more once replaced
    tensors = [torch.zeros(1) for _ in range(NAMED_LOOP_PASSES + 2)]
    for i, x in enumerate(tensors):
        bind("y", x, 9, (i,))
        assert state.name_of(x) == "y"
    assert state.name_of(tensors[-2]) is None
    state.forget_syntax()
    assert state.name_of(t) == "t"  # searched again once the kept names go


def test_backward_s_arguments_are_checked_as_before_a_pass():
    head = "import torch\nw = torch.ones(2, requires_grad=True)\ny = (w * 2).sum()\n"
    unknown = run_program(head + "y.backward(foo=1, retain_graph=True)\n", RunOptions())
    assert unknown.error.message == (
        "backward() takes gradient, retain_graph, create_graph; not ['foo']"
    )
    assert run_program(head + "y.backward(None, True, False, 1)\n", RunOptions()).error
    assert run(head + "y.backward(retain_graph=True)\ny.backward(gradient=None)\n").backward
