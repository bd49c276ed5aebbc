"""gradviz.program.recording.backward: the backward walk-through keeps the steps of a run's last backward,
with the previews of the gradients as they were when each step ran."""

from __future__ import annotations

import pytest
import torch

from gradviz.graph.values import part_preview, preview_part, tensor_values
from gradviz.program.interpreter.run import run_program
from gradviz.program.recording.grad_fns import leaf_of
from gradviz.program.results.trace import RunOptions

HEADER = "import torch\n"


def run(source: str, **options):
    return run_program(source, RunOptions(classic=False, **options))


@pytest.mark.parametrize(
    "shape", [(), (0,), (3, 0), (1,), (6,), (7,), (64, 32), (2, 7, 3), (1, 1, 1, 9), (2,) * 12]
)
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]
)
@pytest.mark.parametrize("whole", [False, True])
def test_a_part_previews_as_the_whole_tensor(shape, dtype, whole):
    t = (torch.randn(shape) * 1e3).to(dtype)
    assert part_preview(preview_part(t, whole)) == tensor_values(t)[1]
    if t.dim() == 2:  # a transposed (strided) and an expanded (stride 0) tensor
        assert part_preview(preview_part(t.t(), whole)) == tensor_values(t.t())[1]
        wide = t[:1].expand(9, -1)
        assert part_preview(preview_part(wide, whole)) == tensor_values(wide)[1]


def test_big_tensors_and_odd_values_preview_alike():
    for t in (
        torch.randn(100, 100),  # past the stored values: the flat preview
        torch.tensor([float("nan"), float("inf"), -0.0, 1e-9, 123456.0]),
        torch.empty(0, 5000),
        torch.randn(10, 10)[2:, 3:],  # a view with an offset
    ):
        for whole in (False, True):
            assert part_preview(preview_part(t, whole)) == tensor_values(t)[1]


def test_a_part_does_not_change_with_its_tensor():
    for whole in (False, True):
        t = torch.ones(3, 3)
        part = preview_part(t, whole)
        t.mul_(7)
        assert part_preview(part) == tensor_values(torch.ones(3, 3))[1]


LOOP = HEADER + (
    "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    "for k in range(3):\n"
    "    loss = (w * (k + 1)).sum()\n"
    "    loss.backward()\n"
)


def test_only_the_last_backward_keeps_its_steps():
    trace = run(LOOP)
    assert trace.error is None, trace.error
    records = trace.backward
    assert len(records) == 3 and [r.line for r in records] == [5, 5, 5]
    assert [len(r.steps) for r in records[:-1]] == [0, 0]
    last = records[-1]
    assert [s.fn.split("::")[-1] for s in last.steps] == [
        "SumBackward0",
        "MulBackward0",
        "AccumulateGrad",
    ]
    # the third pass: d(3w)/dw = 3, as it flowed, not the 1 + 2 + 3 that .grad holds after
    assert last.steps[2].upstream == ["[3.0000, 3.0000]"]
    assert last.steps[1].produced == ["[3.0000, 3.0000]", "None"]  # w, and the constant
    assert last.accumulated  # .grad held the first two passes' gradients
    assert trace.tensor("w").grad == [6.0, 6.0]


def test_a_retained_graph_run_again_has_each_node_s_step_once():
    # the nodes keep the hook they got in the first pass; the second writes its own steps
    source = (
        HEADER + "w = torch.ones(2, requires_grad=True)\n"
        "loss = (w * 3).sum()\n"
        "loss.backward(retain_graph=True)\n"
        "loss.backward()\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    first, second = trace.backward
    assert first.steps == [] and len(second.steps) == 3
    assert [s.index for s in second.steps] == [0, 1, 2]
    assert second.steps[2].upstream == ["[3.0000, 3.0000]"]
    assert second.accumulated == ["w"]


def test_a_later_in_place_change_leaves_the_previews_as_they_ran():
    source = LOOP + "with torch.no_grad():\n    w.grad.mul_(100)\n"
    trace = run(source)
    assert trace.error is None, trace.error
    assert trace.backward[-1].steps[2].upstream == ["[3.0000, 3.0000]"]
    assert trace.tensor("w").grad == [600.0, 600.0]


def test_the_requested_backward_is_the_one_kept():
    trace = run(LOOP + "out = (w * w).sum()\n", backward="out")
    assert trace.error is None, trace.error
    assert [len(r.steps) for r in trace.backward] == [0, 0, 0, 3]
    assert trace.backward[-1].origin == "request"
    assert trace.backward[-1].steps[0].upstream == ["1.0000"]


def test_a_failed_requested_backward_leaves_the_program_s_last_one():
    trace = run(LOOP + "out = w.detach() * 2\n", backward="loss")
    # `loss`'s graph was freed by the program's own backward: the request fails
    assert trace.error is not None
    assert len(trace.backward) == 3
    assert len(trace.backward[-1].steps) == 3
    assert trace.backward[-1].steps[2].upstream == ["[3.0000, 3.0000]"]


def test_a_gradient_that_became_grad_is_previewed_as_it_flowed():
    """The first backward's gradient for a leaf becomes its .grad (the same tensor): an
    in-place change of .grad afterwards must not reach the preview."""
    source = HEADER + (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "loss = (w * 3).sum()\n"
        "loss.backward()\n"
        "with torch.no_grad():\n"
        "    w.grad.mul_(100)\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    assert trace.backward[-1].steps[2].upstream == ["[3.0000, 3.0000]"]
    assert trace.tensor("w").grad == [300.0, 300.0]


def test_a_pass_past_its_room_copies_first_values_only(monkeypatch):
    from gradviz.program.recording import backward as recording

    monkeypatch.setattr(recording, "WHOLE_COPIES", 3)
    trace = run(LOOP)
    assert trace.error is None, trace.error
    assert trace.backward[-1].steps[2].upstream == ["[3.0000, 3.0000]"]


def test_a_given_gradient_changed_later_is_previewed_as_it_flowed():
    """backward(g) hands autograd the program's own tensor (and views of it flow on): a
    later in-place change of g must not reach the previews."""
    source = HEADER + (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "g = torch.tensor([1.0, 1.0])\n"
        "y = w * 3\n"
        "y.backward(g)\n"
        "g.mul_(100)\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    steps = trace.backward[-1].steps
    assert steps[0].upstream == ["[1.0000, 1.0000]"]
    assert steps[1].upstream == ["[3.0000, 3.0000]"]


def test_a_retained_grad_changed_later_leaves_the_previews_as_they_ran():
    source = HEADER + (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = w * 3\n"
        "y.retain_grad()\n"
        "loss = y.sum()\n"
        "loss.backward()\n"
        "with torch.no_grad():\n"
        "    y.grad.mul_(100)\n"
        "    w.grad.mul_(100)\n"
    )
    trace = run(source)
    assert trace.error is None, trace.error
    steps = trace.backward[-1].steps
    assert [s.upstream for s in steps] == [["1.0000"], ["[1.0000, 1.0000]"], ["[3.0000, 3.0000]"]]
    assert steps[0].produced == ["[1.0000, 1.0000]"]


def test_leaf_of_answers_per_type_of_torch_node_and_asks_python_nodes_each_time():
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    w = torch.ones(3, requires_grad=True)
    y = (w * 3).sum()
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert leaf_of(acc) is w and leaf_of(acc) is w
    assert leaf_of(y.grad_fn) is None and leaf_of(y.grad_fn) is None  # SumBackward0
    node = Double.apply(w).grad_fn
    assert leaf_of(node) is None
    node.variable = w  # a node of Python's own: its attributes are its own
    assert leaf_of(node) is w
