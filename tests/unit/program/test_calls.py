"""gradviz.program.results.calls and .callwatch: each backward call of a run on its own (its graph, its
gradients, the optimizer steps after it), the first and last few kept, and Trace.at_call."""

from __future__ import annotations

import gc
import pickle
from pathlib import Path

import pytest

from gradviz.graph.render import draw
from gradviz.program.interpreter.run import run_program
from gradviz.program.presets import PRESETS_BY_KEY
from gradviz.program.results.limits import DEFAULT_LIMITS, PUBLIC_PROGRAM_LIMITS, Limits
from gradviz.program.results.trace import RunOptions, cap_result

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def run(source: str, **options):
    trace = run_program(source, RunOptions(classic=False, **options))
    assert trace.error is None, trace.error
    return trace


def example(name: str):
    return run((EXAMPLES / f"{name}.py").read_text())


def grad_of(call, name: str) -> list:
    return next(t.grad for t in call.graph.tensors if t.name == name)


def value_of(call, name: str) -> list:
    return next(t.value for t in call.graph.tensors if t.name == name)


def test_each_call_of_the_sgd_loop_has_its_own_graph_values_and_step():
    trace = example("sgd_loop")
    calls = trace.calls
    assert calls.count == 3 and calls.steps == 3
    assert [c.number for c in calls.kept] == [1, 2, 3]
    assert [c.passes for c in calls.kept] == [(0,), (1,), (2,)]
    assert calls.kept[1].title(3) == "backward call 2 of 3 (line 11, iteration 1)"
    for c in calls.kept:
        # the call's graph: w, b, its own loss and the five functions between them
        assert sorted(n.title for n in c.graph.nodes if n.kind == "tensor") == ["b", "loss", "w"]
        assert len([n for n in c.graph.nodes if n.kind == "function"]) == 5
        assert {s.node for s in c.record.steps} <= {n.id for n in c.graph.nodes}
        assert [s.number for s in c.steps] == [c.number]
    # the values as they were at each call: w starts at 0, then moves by each step
    first, second = calls.kept[0], calls.kept[1]
    assert value_of(first, "w") == [0.0]
    assert value_of(second, "w") == pytest.approx([first.steps[0].after[0].norm], abs=1e-6)
    step = first.steps[0]
    assert [s.name for s in step.before] == ["w", "b"]
    assert step.before[0].preview == "[0.0000]" and step.after[0].preview == "[0.4783]"
    # with zero_grad(): each call's gradient is its own, printed by the program too
    printed = [line.split("tensor(")[1] for line in trace.stdout]
    assert [f"[{grad_of(c, 'w')[0]:.4f}])" for c in calls.kept] == printed
    assert [g.name for g in first.grads] == ["w", "b"]


def test_without_zero_grad_each_call_adds_to_the_gradients_before_it():
    fresh = example("sgd_loop").calls.kept
    summed = example("sgd_no_zero_grad").calls.kept
    # call 1 is the same; the parameters at call 2 are the same in both programs (one step
    # from the same gradient), so without zero_grad() call 2's w.grad is call 1's plus its own
    assert grad_of(summed[0], "w") == grad_of(fresh[0], "w")
    assert value_of(summed[1], "w") == value_of(fresh[1], "w")
    want = grad_of(fresh[0], "w")[0] + grad_of(fresh[1], "w")[0]
    assert grad_of(summed[1], "w")[0] == pytest.approx(want, rel=1e-6)
    norms = [c.grads[0].norm for c in summed]
    assert norms[0] < norms[1] < norms[2]  # the gradients grow call after call
    assert summed[1].record.accumulated == ["b", "w"]


def test_identical_batches_without_zero_grad_double_and_triple_the_gradient():
    trace = run(
        "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "for i in range(3):\n"
        "    y = (x ** 2).sum()\n"
        "    y.backward()\n"
    )
    grads = [grad_of(c, "x") for c in trace.calls.kept]
    assert grads == [[2.0, 4.0, 6.0], [4.0, 8.0, 12.0], [6.0, 12.0, 18.0]]
    assert [c.grads[0].norm for c in trace.calls.kept] == pytest.approx(
        [56**0.5, 2 * 56**0.5, 3 * 56**0.5]
    )
    # the run's own (whole) graph shows the gradient as it is at the end
    assert trace.tensor("x").grad == [6.0, 12.0, 18.0]


def test_a_long_loop_keeps_the_first_and_last_calls_fewer_in_public_limits():
    source = (
        "w = torch.zeros(2, requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.1)\n"
        "for i in range(40):\n"
        "    opt.zero_grad()\n"
        "    loss = ((w - torch.tensor([1.0, 2.0])) ** 2).sum()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
    )
    assert DEFAULT_LIMITS.backward_calls_kept == 6
    assert PUBLIC_PROGRAM_LIMITS.backward_calls_kept == 4
    calls = run(source).calls
    assert calls.count == 40 and calls.steps == 40
    assert [c.number for c in calls.kept] == [1, 2, 3, 38, 39, 40]
    assert calls.left_out() == (
        "34 of the 40 backward calls are not kept (4 to 37): a result keeps the first and "
        "the last ones"
    )
    assert [c.steps[0].after_call for c in calls.kept] == [1, 2, 3, 38, 39, 40]
    public = run(source, limits=PUBLIC_PROGRAM_LIMITS).calls
    assert [c.number for c in public.kept] == [1, 2, 39, 40]
    one = run(source, limits=Limits(backward_calls_kept=1)).calls
    assert [c.number for c in one.kept] == [1]


def test_at_call_shows_that_calls_graph_and_the_last_by_default():
    trace = example("sgd_no_zero_grad")
    whole = {n.title for n in trace.graph.nodes}
    assert {"loss[0]", "loss[1]", "loss[2]"} <= whole
    last = trace.at_call(None)
    assert last.graph is trace.calls.kept[-1].graph
    assert last.backward == [trace.calls.kept[-1].record]
    first = trace.at_call(1)
    assert first.tensor("w").grad == grad_of(trace.calls.kept[0], "w")
    assert first.tensor("w").grad != last.tensor("w").grad
    assert draw(first) != draw(last)
    assert "-4.7832" in draw(first) and "-11.3949" in draw(last)
    assert trace.at_call(99) is trace  # not kept: the whole run
    single = run("x = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()\ny.backward()\n")
    assert single.calls.count == 1
    assert single.at_call(None) is single  # one call: its graph is the whole run's


def test_a_requested_backward_is_a_call_too_and_calls_survive_pickling_and_caps():
    preset = PRESETS_BY_KEY["tutorial_net"]
    trace = cap_result(run(preset.source, backward=preset.backward))
    assert trace.calls.count == 1
    back = pickle.loads(pickle.dumps(trace))
    call = back.calls.kept[0]
    assert call.record.origin == "request"
    names = {t.name for t in call.graph.tensors}
    assert {"net.fc1.weight", "net.conv1.weight", "temperature", "loss"} <= names
    # one call: it is drawn by the run's own graph and record, not a second copy of them
    assert call.graph is back.graph and call.record is back.backward[0]
    assert {g.name for g in call.grads} >= {"net.fc1.weight", "temperature"}


def test_big_leaves_are_described_at_the_call_not_copied():
    """A call copies at most CALL_VALUES of its leaves' numbers; the rest keep a preview
    taken at the call, so an accumulating .grad still shows call by call."""
    from gradviz.program.recording import steps as callwatch

    leaves = "".join(f"{n} = torch.ones(4000, requires_grad=True)\n" for n in "abcd")
    trace = run(leaves + "for i in range(2):\n    y = (a + b + c + d).sum()\n    y.backward()\n")
    assert callwatch.CALL_VALUES < 4 * 2 * 4000
    first, second = trace.calls.kept
    for call, g in ((first, "1.0000"), (second, "2.0000")):
        info = {t.name: t for t in call.graph.tensors}
        assert info["a"].grad == [float(g)] * 4000  # copied: carried in full
        assert info["d"].grad is None  # over the copy budget: described then
        assert info["d"].grad_preview.startswith(f"[{g}, {g}")


SHARED_LOOP = """import torch
import torch.optim as optim
w = torch.ones(2, requires_grad=True)
opt = optim.SGD([w], lr=0.1)
for i in range(3):
    opt.zero_grad()
    loss = (w * w).sum()
    loss.backward()
    opt.step()
{after}
"""


@pytest.mark.parametrize(
    "after, values",
    [
        ("", [1.0, 0.8, 0.64]),  # the step's copies, shared with the next call: unchanged
        ("    with torch.no_grad():\n        w.add_(1)", [1.0, 1.8, 2.44]),  # a version bump
        ("    w.data.add_(1)", [1.0, 1.8, 2.44]),  # no version bump: .data stops the sharing
    ],
)
def test_each_call_shows_its_leaves_as_they_were_however_they_changed_between(after, values):
    trace = run(SHARED_LOOP.format(after=after))
    calls = trace.calls.kept
    assert [value_of(c, "w")[0] for c in calls] == pytest.approx(values)
    for c, v in zip(calls, values, strict=True):
        step = c.steps[0]
        assert step.before[0].preview == f"[{v:.4f}, {v:.4f}]"
        assert step.after[0].preview == f"[{0.8 * v:.4f}, {0.8 * v:.4f}]"


def test_a_long_loop_leaves_little_for_the_garbage_collector():
    """A run frees what it held (autograd nodes, layer calls, variables) when its result is
    built: the interpreter's parts refer to each other, so what is left to the cyclic
    collector after the run would otherwise grow by about 18 objects a pass."""
    loop = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "import torch.optim as optim\n"
        "net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))\n"
        "opt = optim.SGD(net.parameters(), lr=0.01)\n"
        "x = torch.randn(64, 8)\ny = torch.randn(64, 1)\n"
        "for step in range({passes}):\n"
        "    opt.zero_grad()\n"
        "    loss = F.mse_loss(net(x), y)\n"
        "    loss.backward()\n"
        "    opt.step()\n"
    )
    left = {}
    for passes in (100, 300):
        gc.collect()
        trace = run(loop.format(passes=passes))
        left[passes] = gc.collect()
        assert trace.calls.count == passes
    assert left[300] - left[100] < 200 * 12


def test_one_call_shares_the_runs_graph_and_keeps_its_grads_and_step():
    """A run with one backward call builds one graph: the call's is the run's (the page and
    `render` show the whole run then), with the call's .grad and the step after it as noted."""
    trace = run(
        "w = torch.ones(2, requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.5)\n"
        "loss = (w * 3).sum()\n"
        "loss.backward()\n"
        "opt.step()\n"
    )
    assert trace.error is None, trace.error
    assert trace.calls.count == 1 and len(trace.calls.kept) == 1
    call = trace.calls.kept[0]
    assert call.graph is trace.graph and call.record is trace.backward[0]
    assert [(g.name, g.preview) for g in call.grads] == [("w", "[3.0000, 3.0000]")]
    (step,) = call.steps
    assert step.before[0].preview == "[1.0000, 1.0000]"
    assert step.after[0].preview == "[-0.5000, -0.5000]"
    assert trace.at_call(None) is trace and trace.at_call(1).graph is trace.graph
