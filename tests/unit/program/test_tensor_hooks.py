"""A program's tensor hooks (`x.register_hook(f)`): run by the interpreter inside backward,
printing and changing gradients as plain PyTorch does for the same program."""

from __future__ import annotations

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.objects.hooks import MAX_HOOKS
from gradviz.program.results.trace import RunOptions
from tests.unit.program.test_grad_fn_walk import addresses_by_order, interpreted, plain_pytorch

PROGRAMS = {
    "print-hook": (
        "x = torch.ones(3, requires_grad=True)\n"
        "y = x * 2\n"
        "h = y.register_hook(lambda g: print('grad of y', g))\n"
        "y.sum().backward()\n"
        "print(x.grad)\n"
    ),
    "doubling-hook-then-removed": (
        "x = torch.ones(3, requires_grad=True)\n"
        "def double(g):\n"
        "    print('doubling', g)\n"
        "    return g * 2\n"
        "h = x.register_hook(double)\n"
        "(x * 3).sum().backward()\n"
        "print(x.grad)\n"
        "h.remove()\n"
        "x.grad = None\n"
        "(x * 3).sum().backward()\n"
        "print(x.grad)\n"
        "print(h)\n"
    ),
    "print-itself": (
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "x.register_hook(print)\n"
        "(x ** 2).sum().backward()\n"
        "print(x.grad)\n"
    ),
    "hooks-in-order-and-clamp": (
        "w = torch.tensor([0.5, -2.0, 3.0], requires_grad=True)\n"
        "w.register_hook(lambda g: g.clamp(-1, 1))\n"
        "w.register_hook(lambda g: print('after clamp', g))\n"
        "loss = (w * torch.tensor([4.0, 5.0, -6.0])).sum()\n"
        "loss.backward()\n"
        "print(w.grad)\n"
    ),
    "hook-in-a-network": (
        "torch.manual_seed(0)\n"
        "lin = torch.nn.Linear(2, 1)\n"
        "hidden = lin(torch.ones(4, 2))\n"
        "hidden.register_hook(lambda g: print('hidden grad', g.shape))\n"
        "hidden.mean().backward()\n"
        "print(lin.weight.grad)\n"
    ),
}


@pytest.mark.parametrize("key", PROGRAMS)
def test_hooks_print_and_change_what_pytorch_does(key):
    source = PROGRAMS[key]
    ours = interpreted(source)
    assert addresses_by_order(ours) == addresses_by_order(plain_pytorch(source))


def test_hook_on_a_tensor_without_grad_is_pytorchs_error():
    trace = run_program("x = torch.ones(3)\nx.register_hook(print)\n", RunOptions())
    assert trace.error.kind == "runtime"
    assert "doesn't require gradient" in trace.error.message
    assert trace.error.line == 2


def test_hook_errors_point_at_the_hook():
    trace = run_program(
        "x = torch.ones(3, requires_grad=True)\n"
        "def h(g):\n"
        "    return g + undefined_name\n"
        "x.register_hook(h)\n"
        "(x * 2).sum().backward()\n",
        RunOptions(),
    )
    assert trace.error.kind == "name"
    assert trace.error.line == 3


def test_a_loop_may_register_up_to_the_cap():
    source = (
        "x = torch.ones(1, requires_grad=True)\n"
        f"for i in range({MAX_HOOKS}):\n"
        "    h = x.register_hook(lambda g: None)\n"
        "    h.remove()\n"
    )
    assert run_program(source, RunOptions()).error is None
    trace = run_program(source + "x.register_hook(print)\n", RunOptions())
    assert trace.error.kind == "limit" and trace.error.line == 5


def test_hook_steps_count_against_the_run():
    trace = run_program(
        "x = torch.ones(3, requires_grad=True)\n"
        "def h(g):\n"
        "    for i in range(10 ** 7):\n"
        "        g = g + 0\n"
        "    return g\n"
        "x.register_hook(h)\n"
        "(x * 2).sum().backward()\n",
        RunOptions(),
    )
    assert trace.error.kind == "limit"
    assert trace.error.line == 3


def test_hook_gradient_is_on_its_tensors_simulated_device():
    trace = run_program(
        "x = torch.ones(2, requires_grad=True, device='cuda')\n"
        "x.register_hook(print)\n"
        "(x * 2).sum().backward()\n",
        RunOptions(simulate_cuda=True),
    )
    assert trace.error is None, trace.error
    assert trace.stdout == ["tensor([2., 2.], device='cuda:0')"]


@pytest.mark.parametrize(
    "body",
    [
        "    g.data.mul_(1000)\n",
        "    v = g.view(-1)\n    v.data.mul_(1000)\n",
        "    g.view(-1).mul_(1000)\n",
        "    g[0] = 1000.0\n",
    ],
)
def test_a_hook_cannot_change_its_gradient_in_place(body):
    trace = run_program(
        "x = torch.ones(3, requires_grad=True)\n"
        "def h(g):\n" + body + "x.register_hook(h)\n"
        "(x * x).sum().backward()\n"
        "print(x.grad)\n",
        RunOptions(),
    )
    # refused, or (through an alias torch cannot see) with no effect on the gradient
    assert trace.error is not None or trace.stdout == ["tensor([2., 2., 2.])"], trace.stdout
    if trace.error is not None:
        assert trace.error.kind in ("type", "forbidden"), trace.error
