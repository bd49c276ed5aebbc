"""Lazy layers (nn.LazyLinear, nn.LazyConv2d): sized at their first call, the sizes held to
the budgets before the parameters exist; what programs print is what plain PyTorch prints."""

from __future__ import annotations

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.unit.program.test_grad_fn_walk import interpreted, plain_pytorch

PROGRAMS = {
    "sequential": (
        "torch.manual_seed(0)\n"
        "net = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2))\n"
        "print(net)\n"
        "y = net(torch.ones(3, 5))\n"
        "print(net)\n"
        "print(y)\n"
        "print(net[0].weight.shape, net[2].weight.shape)\n"
        "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "y.sum().backward()\n"
        "opt.step()\n"
        "print(net[2].bias)\n"
    ),
    "conv": (
        "torch.manual_seed(0)\n"
        "c = nn.LazyConv2d(4, 3, padding=1)\n"
        "out = c(torch.ones(2, 3, 5, 5))\n"
        "print(c)\n"
        "print(out.shape, c.weight.shape, c.in_channels)\n"
        "print(c.weight.sum(), c.bias)\n"
    ),
    "conv-then-lazy-linear": (
        "torch.manual_seed(1)\n"
        "net = nn.Sequential(nn.LazyConv2d(2, 3), nn.Flatten(), nn.LazyLinear(3))\n"
        "print(net(torch.ones(1, 1, 4, 4)))\n"
        "print(sum(p.numel() for p in net.parameters()))\n"
    ),
    "second-call": (
        "torch.manual_seed(0)\n"
        "l = nn.LazyLinear(2, bias=False)\n"
        "a = l(torch.ones(1, 3))\n"
        "b = l(torch.ones(4, 3))\n"
        "print(a, b.shape, l)\n"
    ),
}


@pytest.mark.parametrize("key", PROGRAMS)
def test_lazy_layers_print_what_pytorch_prints(key):
    source = PROGRAMS[key]
    assert "\n".join(interpreted(source)) == "\n".join(plain_pytorch(source))


@pytest.mark.parametrize(
    ("source", "kind", "words", "line"),
    [
        ("l = nn.LazyLinear(10000)\ny = l(torch.ones(2, 10000))", "limit", "parameters", 2),
        (
            "net = nn.Sequential(nn.LazyLinear(4000), nn.LazyLinear(4000))\n"
            "y = net(torch.ones(1, 4000))",
            "limit",
            "parameters",
            2,
        ),
        ("l = nn.LazyLinear(4)\nopt = torch.optim.Adam(l.parameters())", "type", "dry run", 2),
        ("l = nn.LazyConv2d(4, 3)\ny = l(torch.ones(2, 3))", "runtime", "Expected 3D", 2),
        ("l = nn.LazyLinear(3)\nw = l.weight * 2", "runtime", "first call", 2),
        (
            "a = nn.Linear(3, 2)\nl = nn.LazyLinear(2)\nl.load_state_dict(a.state_dict())",
            "type",
            "dry run",
            3,
        ),
        ("l = nn.LazyLinear(3)\nw = torch.stack([l.weight])", "runtime", "first call", 2),
        ("l = nn.LazyLinear(3)\ns = l.weight.shape", "runtime", "first call", 2),
    ],
)
def test_sizes_are_checked_at_the_first_call(source, kind, words, line):
    trace = run_program(source, RunOptions())
    assert trace.error is not None and trace.error.kind == kind, trace.error
    assert words in (trace.error.message + (trace.error.hint or ""))
    assert trace.error.line == line


def test_lazy_layer_on_simulated_cuda():
    trace = run_program(
        "l = nn.LazyLinear(2).to('cuda')\n"
        "y = l(torch.ones(1, 3, device='cuda'))\n"
        "print(y.device, l.weight.device)\n",
        RunOptions(simulate_cuda=True),
    )
    assert trace.error is None, trace.error
    assert trace.stdout == ["cuda:0 cuda:0"]
