"""`torch.Tensor(...)` called as older tutorials do: a float32 tensor from nested lists (as
plain PyTorch prints it), zeros for sizes (PyTorch's memory is uninitialised: a warning says
so), refusals for the rest."""

from __future__ import annotations

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.unit.program.test_grad_fn_walk import interpreted, plain_pytorch

FROM_DATA = [
    "a = torch.Tensor([[1, 2], [3, 4]])\nprint(a, a.dtype, a.shape)",
    "a = torch.Tensor([True, False])\nprint(a)",
    "a = torch.Tensor([1.5, -2])\nb = a * torch.Tensor([2, 2])\nprint(b)",
    "a = torch.Tensor()\nprint(a, a.shape)",
    "a = torch.Tensor((1, 2, 3))\nprint(a.sum())",
    "w = torch.Tensor([0.5, 1.0]).requires_grad_()\n(w * w).sum().backward()\nprint(w.grad)",
    "print(isinstance(torch.Tensor([1]), torch.Tensor))",
]


@pytest.mark.parametrize("source", FROM_DATA)
def test_from_data_prints_what_pytorch_prints(source):
    assert "\n".join(interpreted(source)) == "\n".join(plain_pytorch(source))


def test_sizes_give_zeros_with_a_warning():
    source = "a = torch.Tensor(2, 3)\nprint(a.shape, a.dtype)\nprint(a)\n"
    # shape and dtype as PyTorch's
    assert interpreted(source)[0] == plain_pytorch(source)[0]
    trace = run_program(source, RunOptions())
    assert trace.stdout[1] == "tensor([[0., 0., 0.],\n        [0., 0., 0.]])"
    (warning,) = trace.warnings
    assert warning.line == 1 and "uninitialised" in warning.message and "zeros" in warning.message


@pytest.mark.parametrize(
    ("source", "kind", "words"),
    [
        ("a = torch.Tensor(torch.ones(2))", "type", "not tensor"),
        ("a = torch.Tensor(2.5)", "type", "not float"),
        ("a = torch.Tensor([1], dtype=torch.float64)", "type", "no keywords"),
        ("a = torch.Tensor(100000, 100000)", "limit", "would allocate"),
        ("a = torch.Tensor(-1)", "runtime", "non-negative"),
    ],
)
def test_anything_else_is_refused(source, kind, words):
    trace = run_program(source, RunOptions())
    assert trace.error.kind == kind and trace.error.line == 1
    assert words in trace.error.message
