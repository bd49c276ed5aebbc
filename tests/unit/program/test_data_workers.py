"""`DataLoader(..., num_workers=4)`: taken and read in one process, with a warning; the
batches are the ones plain PyTorch's worker processes give for the same program."""

from __future__ import annotations

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.unit.program.test_grad_fn_walk import plain_pytorch

PROGRAM = (
    "torch.manual_seed(0)\n"
    "x = torch.arange(10.0).reshape(5, 2)\n"
    "y = torch.arange(5)\n"
    "ds = torch.utils.data.TensorDataset(x, y)\n"
    "loader = torch.utils.data.DataLoader(ds, batch_size=2, shuffle=True, num_workers=2)\n"
    "print(loader.num_workers, len(loader))\n"
    "for xb, yb in loader:\n"
    "    print(xb, yb)\n"
    "print(torch.rand(1))\n"
)


def test_batches_are_pytorchs_with_workers():
    trace = run_program(PROGRAM, RunOptions())
    assert trace.error is None, trace.error
    assert "\n".join(trace.stdout) == "\n".join(plain_pytorch(PROGRAM))


def test_a_warning_says_one_process():
    trace = run_program(PROGRAM, RunOptions())
    (warning,) = trace.warnings
    assert warning.line == 5
    assert warning.message.startswith("num_workers=2 runs in one process here")
