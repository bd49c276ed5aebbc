"""`@torch.no_grad()`, `@torch.enable_grad()` and `@torch.inference_mode()` on a program's functions and methods
(nanoGPT's `estimate_loss` and `generate`): each call runs in that grad mode, and the mode
before the call is back after it; any other decorator is refused at its line and column."""

from __future__ import annotations

import pytest

from gradviz.program.interpreter.run import run_program
from gradviz.program.results.trace import RunOptions
from tests.same_as_python import printed, python_printed


def run(source: str):
    return run_program(source, RunOptions(classic=False))


def test_a_no_grad_function_makes_no_graph_and_restores_the_mode():
    trace = run(
        "x = torch.ones(3, requires_grad=True)\n"
        "@torch.no_grad()\n"
        "def estimate(t):\n"
        "    return (t * 2).sum()\n"
        "@torch.no_grad\n"
        "def bare(t):\n"
        "    return t + 1\n"
        "def plain(t):\n"
        "    return t * 3\n"
        "a = estimate(x)\nb = bare(x)\nc = plain(x)\n"
        "print(a.requires_grad, b.requires_grad, c.requires_grad, torch.is_grad_enabled())\n"
    )
    assert trace.error is None, trace.error
    assert trace.stdout == ["False False True True"]


def test_enable_grad_inside_no_grad_and_an_error_inside_restores_the_mode():
    trace = run(
        "x = torch.ones(2, requires_grad=True)\n"
        "@torch.enable_grad()\n"
        "def grads(t):\n"
        "    return t * 2\n"
        "with torch.no_grad():\n"
        "    y = grads(x)\n"
        "print(y.requires_grad)\n"
    )
    assert trace.error is None, trace.error
    assert trace.stdout == ["True"]
    trace = run(
        "@torch.no_grad()\n"
        "def bad(t):\n"
        "    return t @ t\n"
        "x = torch.ones(2, 3, requires_grad=True)\n"
        "y = bad(x)\n"
    )
    assert trace.error is not None and trace.error.line == 3


def test_a_no_grad_method_as_nanogpts_generate():
    trace = run(
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(3, 2)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "    @torch.no_grad()\n"
        "    def generate(self, x):\n"
        "        return self(x).argmax(dim=1)\n"
        "net = Net()\nx = torch.randn(4, 3)\n"
        "out = net.generate(x)\ny = net(x).sum()\ny.backward()\n"
        "print(out.requires_grad, y.requires_grad, net.fc.weight.grad is not None)\n"
    )
    assert trace.error is None, trace.error
    assert trace.stdout == ["False True True"]


@pytest.mark.parametrize(
    ("decorator", "col"),
    [
        ("@property", 2),
        ("@staticmethod", 2),
        ("@print", 2),
        ("@torch.no_grad(True)", 2),
        ("@no_grad()", 2),  # not imported
        ("@torch.inference_mode(False)", 2),
        ("@(lambda f: f)", 3),
    ],
)
def test_other_decorators_are_refused_at_their_place(decorator, col):
    trace = run(f"x = 1\n{decorator}\ndef f():\n    return 1\n")
    err = trace.error
    assert err is not None and err.kind == "forbidden", err
    assert (err.line, err.col) == (2, col)
    assert "@torch.no_grad()" in err.message


def test_inference_mode_as_a_block_and_a_decorator_prints_what_python_prints():
    source = (
        "x = torch.ones(2, requires_grad=True)\n"
        "@torch.inference_mode()\n"
        "def evaluate(t):\n"
        "    return (t * 2).sum()\n"
        "with torch.inference_mode():\n"
        "    y = x + 1\n"
        "    print(torch.is_grad_enabled(), y.requires_grad)\n"
        "print(evaluate(x), y, torch.is_grad_enabled())\n"
    )
    assert printed(source) == python_printed(source)
