"""Walking autograd's graph from a program (`y.grad_fn.next_functions`, `.name()`,
`.variable`, `._saved_self`): what it prints is what plain PyTorch prints for the same
program, node addresses aside (numbered in the order the program reads them)."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
import torch

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions

ADDRESS = re.compile(r"0x[0-9a-f]+")


def plain_pytorch(source: str) -> list[str]:
    """The lines plain Python with torch prints for `source` (trusted test text)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), torch.random.fork_rng():
        torch.manual_seed(0)
        exec(compile(source, "<test>", "exec"), {"torch": torch, "nn": torch.nn})  # noqa: S102
    return out.getvalue().splitlines()


def interpreted(source: str) -> list[str]:
    trace = run_program(source, RunOptions())
    assert trace.error is None, trace.error
    return trace.stdout


def addresses_by_order(lines: list[str]) -> list[str]:
    """Each address replaced by the order it first appears in: the same node, the same
    number, in both runs."""
    seen: dict[str, int] = {}

    def number(m: re.Match) -> str:
        return f"@{seen.setdefault(m.group(0), len(seen))}"

    return [ADDRESS.sub(number, line) for line in lines]


WALKS = {
    "notes-walk": (
        "x = torch.ones(3, requires_grad=True)\n"
        "w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "loss = (x * w).sum()\n"
        "print(loss.grad_fn)\n"
        "print(loss.grad_fn.next_functions)\n"
        "print(loss.grad_fn.next_functions[0][0])\n"
        "print(loss.grad_fn.next_functions[0][0].next_functions)\n"
        "print(loss.grad_fn.name())\n"
        "acc = loss.grad_fn.next_functions[0][0].next_functions[0][0]\n"
        "print(acc.name())\n"
        "print(acc.variable)\n"
        "print(acc.variable is x)\n"
        "print(loss.grad_fn is loss.grad_fn)\n"
    ),
    "saved": (
        "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "b = torch.tensor([3.0, 4.0], requires_grad=True)\n"
        "c = a * b\n"
        "print(c.grad_fn._saved_self)\n"
        "print(c.grad_fn._saved_other)\n"
        "print(torch.equal(c.grad_fn._saved_self, a))\n"
        "d = a.sum()\n"
        "print(d.grad_fn._saved_self_sym_sizes)\n"
        "e = a.exp()\n"
        "print(e.grad_fn._saved_result)\n"
    ),
    "walk-in-a-loop": (
        "x = torch.ones(2, requires_grad=True)\n"
        "y = ((x * 2 + 1).relu()).mean()\n"
        "fn = y.grad_fn\n"
        "while fn is not None:\n"
        "    print(fn.name(), len(fn.next_functions))\n"
        "    fn = fn.next_functions[0][0]\n"
        "    if fn is not None and fn.name() == 'torch::autograd::AccumulateGrad':\n"
        "        print(fn.variable)\n"
        "        fn = None\n"
    ),
    "linear": (
        "torch.manual_seed(0)\n"
        "lin = torch.nn.Linear(3, 2)\n"
        "out = lin(torch.ones(1, 3)).sum()\n"
        "print(out.grad_fn.next_functions[0][0].next_functions)\n"
        "print([f[0].name() for f in out.grad_fn.next_functions[0][0].next_functions"
        " if f[0] is not None])\n"
    ),
}


@pytest.mark.parametrize("key", WALKS)
def test_walk_prints_what_pytorch_prints(key):
    source = WALKS[key]
    ours = interpreted(source)
    assert addresses_by_order(ours) == addresses_by_order(plain_pytorch(source))


def test_addresses_are_the_same_on_every_run():
    source = WALKS["notes-walk"]
    assert interpreted(source) == interpreted(source)
    assert interpreted(source)[0] == "<SumBackward0 object at 0x7f0000000040>"


def test_saved_tensor_freed_by_backward_is_a_runtime_error():
    trace = run_program(
        "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "c = (a * a).sum()\n"
        "m = c.grad_fn.next_functions[0][0]\n"
        "c.backward()\n"
        "s = m._saved_self\n",
        RunOptions(),
    )
    assert trace.error is not None and trace.error.kind == "runtime"
    assert trace.error.line == 5


@pytest.mark.parametrize(
    "line",
    [
        "h = y.grad_fn.register_hook(print)",
        "h = y.grad_fn.register_prehook(print)",
        "m = y.grad_fn.metadata",
        "r = y.grad_fn.apply(x)",
        "r = y.grad_fn(x)",
        "v = y.grad_fn.variable",
        "s = y.grad_fn._saved_weight",
        "r = y.grad_fn._raw_saved_self",
        "y.grad_fn._saved_self = x",
    ],
)
def test_anything_else_is_refused_at_its_line(line):
    source = "x = torch.ones(3, requires_grad=True)\ny = x * 2\n" + line + "\n"
    trace = run_program(source, RunOptions())
    assert trace.error is not None
    assert trace.error.kind in ("type", "forbidden")
    assert trace.error.line == 3
